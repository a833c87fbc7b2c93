// The bridge's uplink outbox (DESIGN.md section 8). The lead appends this as a new entry of
// src/bridge/migrations.ts (name "uplink_outbox"); it must not be edited once shipped.
//  - uplink_outbox: events waiting for the broker's PUBACK, published in seq order and
//    deleted one by one as each is acknowledged, so a broker outage or a restart loses nothing.
//  - uplink_state: the boot counter ("session") carried in every status message, so the hub
//    can tell a late last will of an earlier boot from news.
export const uplinkMigrationSql = `
      CREATE TABLE uplink_outbox (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id   TEXT NOT NULL UNIQUE,
        kind       TEXT NOT NULL CHECK (kind IN ('message', 'delivery', 'telemetry', 'position')),
        payload    TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE uplink_state (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `;
