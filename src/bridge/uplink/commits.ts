import type { DatabaseSync } from 'node:sqlite';
import { committed, inTransaction, pendingCommit } from '../../db/sqlite.ts';

// How the uplink waits for the router's open group of ingests (db/transaction.ts): reading the
// outbox inside someone's open transaction could publish a row, or act on an ack for a row,
// that the transaction then rolls back.

/** A group of ingests is open and nothing runs inside it now: committed() settles soon. */
export function groupBetweenUnits(db: DatabaseSync): boolean {
  return pendingCommit(db) && !inTransaction(db);
}

/** Settles when the open group has committed or failed (a failed group's rows are gone, so
 *  there is nothing to publish from it). The uplink only watches: it does not hurry the group
 *  as an acknowledgement would (db/transaction.ts, MAX_WAITING). */
export function groupCommitted(db: DatabaseSync): Promise<void> {
  return committed(db, undefined, { hurry: false }).catch(() => {});
}
