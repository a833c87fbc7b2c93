import { bridgeMigrations } from '../migrations.ts';

// The uplink's tables (docs/design.md section 8) are bridge migration "uplink_outbox":
//  - uplink_outbox: events waiting for the hub's acknowledgement (not the broker's
//    PUBACK), published in seq order and deleted once the hub says it stored them, so a broker
//    outage, a broker that drops its queue or a restart loses nothing;
//  - uplink_state: the boot counter ("session") carried in every status message, so the hub
//    can tell a late last will of an earlier boot from news, and the stable bridge id.
// Tests that use the publisher alone apply this text to an empty database.
export const uplinkMigrationSql: string = bridgeMigrations.find((m) => m.name === 'uplink_outbox')!.sql;
