import type { DatabaseSync } from 'node:sqlite';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { AckedRows } from './acked.ts';
import type { Boot } from './boot.ts';
import type { UplinkConnection } from './connection.ts';
import type { UplinkIdentity } from './identity.ts';
import type { InFlight } from './in-flight.ts';
import type { UplinkOutbox } from './outbox.ts';

/** What the publisher (publisher.ts) builds first and hands to the parts that build on it. */
export interface UplinkParts {
  db: DatabaseSync;
  log: Logger;
  clock: Clock;
  outbox: UplinkOutbox;
  acked: AckedRows;
  inFlight: InFlight;
  boot: Boot;
  identity: UplinkIdentity;
  connection: UplinkConnection;
}
