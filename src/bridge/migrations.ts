import type { Migration } from '../db/migrate.ts';

// The bridge schema, append-only (docs/api.md section 9). Never edit an entry once it has shipped:
// test/db/migrations.lock.json pins a checksum of each, and a change to an old one fails the
// tests. Add a new entry instead. One file over 500 lines on purpose: it is the schema's
// history, read top to bottom, and only ever grows.

export const bridgeMigrations: Migration[] = [
  {
    version: 1,
    name: 'api_keys',
    sql: `
      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        label        TEXT NOT NULL,
        role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
        lookup       TEXT NOT NULL UNIQUE,
        hash         TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        last_used_at TEXT
      );
    `,
  },
  {
    version: 2,
    name: 'routing_core',
    sql: `
      CREATE TABLE interfaces (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        kind        TEXT NOT NULL,
        enabled     INTEGER NOT NULL DEFAULT 1,
        device      TEXT,
        settings    TEXT NOT NULL,
        transforms  TEXT NOT NULL,
        retry       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE object_groups (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        members     TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE contacts (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        addresses   TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE access_rules (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL UNIQUE,
        enabled       INTEGER NOT NULL DEFAULT 1,
        priority      INTEGER NOT NULL,
        match         TEXT NOT NULL,
        schedule      TEXT,
        action        TEXT NOT NULL CHECK (action IN ('forward', 'drop', 'store')),
        destinations  TEXT NOT NULL,
        fired         INTEGER NOT NULL DEFAULT 0,
        last_fired_at TEXT,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
      );
      -- What each rule refers to, so a referenced group or contact cannot be deleted and an
      -- interface's deletion removes exactly the rules that name it.
      CREATE TABLE rule_refs (
        rule_id   TEXT NOT NULL REFERENCES access_rules (id) ON DELETE CASCADE,
        ref_kind  TEXT NOT NULL CHECK (ref_kind IN ('interface', 'group', 'contact')),
        ref_id    TEXT NOT NULL,
        PRIMARY KEY (rule_id, ref_kind, ref_id)
      );
      CREATE INDEX rule_refs_target ON rule_refs (ref_kind, ref_id);
      CREATE TABLE messages (
        id            TEXT PRIMARY KEY,
        direction     TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
        interface_id  TEXT,
        from_addr     TEXT NOT NULL,
        to_addr       TEXT NOT NULL,
        channel       INTEGER,
        kind          TEXT NOT NULL,
        text          TEXT,
        payload       BLOB,
        size          INTEGER NOT NULL,
        rule_id       TEXT,
        action        TEXT,
        decision      TEXT,
        meta          TEXT NOT NULL,
        created_at    TEXT NOT NULL
      );
      CREATE INDEX messages_created ON messages (created_at);
      -- A delivery carries its own copy of what to send, so clearing message history never
      -- stops a delivery in flight (SPEC 4.6).
      CREATE TABLE deliveries (
        id               TEXT PRIMARY KEY,
        message_id       TEXT NOT NULL,
        interface_id     TEXT NOT NULL,
        to_addr          TEXT NOT NULL,
        channel          INTEGER,
        kind             TEXT NOT NULL,
        text             TEXT,
        payload          BLOB,
        from_addr        TEXT NOT NULL,
        state            TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'retrying', 'delivered', 'dead', 'cancelled', 'expired')),
        attempts         INTEGER NOT NULL DEFAULT 0,
        max_attempts     INTEGER NOT NULL,
        next_attempt_ms  INTEGER NOT NULL,
        front_ms         INTEGER,
        expires_ms       INTEGER NOT NULL,
        last_error       TEXT,
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL,
        finished_at      TEXT
      );
      CREATE INDEX deliveries_queue ON deliveries (interface_id, state, next_attempt_ms);
      CREATE INDEX deliveries_message ON deliveries (message_id);
      CREATE INDEX deliveries_state ON deliveries (state, updated_at);
      CREATE TABLE audit_log (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        key_id      TEXT,
        method      TEXT NOT NULL,
        path        TEXT NOT NULL,
        status      INTEGER NOT NULL,
        request_id  TEXT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'config_sections',
    sql: `
      CREATE TABLE config_sections (
        section    TEXT PRIMARY KEY,
        value      TEXT NOT NULL CHECK (json_valid(value)),
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'uplink_outbox',
    sql: `
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
    `,
  },
  {
    version: 5,
    name: 'delivery_queue_indexes',
    sql: `
      -- The dispatcher asks each interface's queue for its next due delivery on every send:
      -- these partial indexes answer in index order instead of sorting the waiting rows.
      CREATE INDEX deliveries_waiting ON deliveries (interface_id, next_attempt_ms, id) WHERE state IN ('pending', 'retrying');
      CREATE INDEX deliveries_front ON deliveries (interface_id, front_ms) WHERE front_ms IS NOT NULL;
      CREATE INDEX deliveries_expiry ON deliveries (expires_ms) WHERE state IN ('pending', 'retrying');
    `,
  },
  {
    version: 6,
    name: 'mesh_nodes_and_seen_frames',
    sql: `
      -- Frames a radio repeats (same sender and packet id) are stored and forwarded once: the
      -- key of every frame stored in the last 24 hours is kept here, across restarts.
      CREATE TABLE seen_frames (
        key          TEXT PRIMARY KEY,
        interface_id TEXT NOT NULL,
        seen_ms      INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX seen_frames_age ON seen_frames (seen_ms);
      -- Nodes heard or reported by a mesh radio (docs/meshtastic.md, "Node database").
      CREATE TABLE nodes (
        node_id         TEXT PRIMARY KEY,
        num             INTEGER NOT NULL,
        interface_id    TEXT NOT NULL,
        long_name       TEXT,
        short_name      TEXT,
        hw_model        TEXT,
        role            TEXT,
        position        TEXT CHECK (position IS NULL OR json_valid(position)),
        device_metrics  TEXT CHECK (device_metrics IS NULL OR json_valid(device_metrics)),
        snr_db          REAL,
        hops_away       INTEGER,
        via_mqtt        INTEGER NOT NULL DEFAULT 0,
        last_heard_at   TEXT,
        updated_at      TEXT NOT NULL
      );
      CREATE INDEX nodes_interface ON nodes (interface_id, node_id);
    `,
  },
  {
    version: 7,
    name: 'delivery_result',
    sql: `
      -- What the bearer said of a delivered send (JSON): the node that acknowledged it, or
      -- that only a neighbour's rebroadcast was heard; whether an SMS centre accepted it or
      -- the handset confirmed it.
      ALTER TABLE deliveries ADD COLUMN result TEXT CHECK (result IS NULL OR json_valid(result));
    `,
  },
  {
    version: 8,
    name: 'driver_state',
    sql: `
      -- Small facts a driver must keep across restarts (BearerContext.state): that a SIM
      -- refused a PIN (its digest, never the PIN), so a restart does not send it again.
      CREATE TABLE driver_state (
        interface_id TEXT NOT NULL,
        key          TEXT NOT NULL,
        value        TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (interface_id, key)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 9,
    name: 'delivery_policy',
    sql: `
      -- Delivery policy across bearers (docs/routing.md, "Delivery policy"). The deliveries
      -- table is rebuilt: SQLite cannot widen a CHECK, and a delivery may now be 'held'
      -- (its interface is down, or it waits until a mesh node is heard again).
      --   precedence    0 override, 1 flash, 2 immediate, 3 priority, 4 routine, 5 deferred;
      --                 each queue is served by it first, then oldest first
      --   held_ttl_ms   the TTL left when the delivery was held with its TTL paused
      --   until_heard   the node a delivery is held for until the node is heard again
      --   fallback_id   the fallback list this delivery is a member of, and its position
      --   size          bytes of text and payload, for the queue's byte cap
      CREATE TABLE deliveries_v9 (
        id               TEXT PRIMARY KEY,
        message_id       TEXT NOT NULL,
        interface_id     TEXT NOT NULL,
        to_addr          TEXT NOT NULL,
        channel          INTEGER,
        kind             TEXT NOT NULL,
        text             TEXT,
        payload          BLOB,
        from_addr        TEXT NOT NULL,
        state            TEXT NOT NULL CHECK (state IN ('pending', 'held', 'sending', 'retrying', 'delivered', 'dead', 'cancelled', 'expired')),
        precedence       INTEGER NOT NULL DEFAULT 4 CHECK (precedence BETWEEN 0 AND 5),
        size             INTEGER NOT NULL DEFAULT 0,
        attempts         INTEGER NOT NULL DEFAULT 0,
        max_attempts     INTEGER NOT NULL,
        next_attempt_ms  INTEGER NOT NULL,
        front_ms         INTEGER,
        expires_ms       INTEGER NOT NULL,
        held_ttl_ms      INTEGER,
        until_heard      TEXT,
        fallback_id      TEXT,
        fallback_pos     INTEGER,
        last_error       TEXT,
        result           TEXT CHECK (result IS NULL OR json_valid(result)),
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL,
        finished_at      TEXT
      );
      INSERT INTO deliveries_v9 (id, message_id, interface_id, to_addr, channel, kind, text, payload, from_addr, state, size, attempts, max_attempts,
          next_attempt_ms, front_ms, expires_ms, last_error, result, created_at, updated_at, finished_at)
        SELECT id, message_id, interface_id, to_addr, channel, kind, text, payload, from_addr, state,
          coalesce(length(CAST(text AS BLOB)), 0) + coalesce(length(payload), 0), attempts, max_attempts,
          next_attempt_ms, front_ms, expires_ms, last_error, result, created_at, updated_at, finished_at FROM deliveries;
      DROP TABLE deliveries;
      ALTER TABLE deliveries_v9 RENAME TO deliveries;
      CREATE INDEX deliveries_message ON deliveries (message_id);
      CREATE INDEX deliveries_state ON deliveries (state, updated_at);
      -- The queue, covering: due deliveries by precedence then age (dueRows), its depth and
      -- bytes for the caps, and the lowest-precedence oldest delivery to evict.
      CREATE INDEX deliveries_queued ON deliveries (interface_id, precedence, id, state, next_attempt_ms, size) WHERE state IN ('pending', 'held', 'retrying');
      CREATE INDEX deliveries_front ON deliveries (interface_id, front_ms) WHERE front_ms IS NOT NULL;
      CREATE INDEX deliveries_expiry ON deliveries (expires_ms) WHERE state IN ('pending', 'retrying', 'held');
      CREATE INDEX deliveries_held ON deliveries (interface_id, until_heard) WHERE state = 'held';
      CREATE INDEX deliveries_fallback ON deliveries (fallback_id) WHERE fallback_id IS NOT NULL;
      -- A fallback list (a rule destination or a send to a contact): its members in order, how
      -- far it got, and when the current member's acknowledgement is due. Stored, not only
      -- timed: after a power cut an escalation that fell due is made at start, once.
      CREATE TABLE fallbacks (
        id           TEXT PRIMARY KEY,
        message_id   TEXT NOT NULL,
        strategy     TEXT NOT NULL CHECK (strategy IN ('ordered', 'first_available', 'all')),
        keep_trying  INTEGER NOT NULL DEFAULT 0,
        members      TEXT NOT NULL CHECK (json_valid(members)),
        position     INTEGER NOT NULL,
        deadline_ms  INTEGER,
        state        TEXT NOT NULL CHECK (state IN ('active', 'delivered', 'exhausted', 'cancelled')),
        precedence   INTEGER NOT NULL,
        ttl_ms       INTEGER,
        trace        TEXT NOT NULL CHECK (json_valid(trace)),
        outcome      TEXT,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL
      );
      CREATE INDEX fallbacks_message ON fallbacks (message_id);
      -- A rule may set the precedence of what it forwards.
      ALTER TABLE access_rules ADD COLUMN precedence TEXT;
      CREATE INDEX fallbacks_due ON fallbacks (deadline_ms) WHERE state = 'active' AND deadline_ms IS NOT NULL;
    `,
  },
  {
    version: 10,
    name: 'nodes_of_every_mesh',
    sql: `
      -- The node database holds the nodes of every mesh a bearer hears (docs/api.md, "Nodes"):
      -- Meshtastic node ids, LXMF addresses heard in Reticulum announces, MeshCore contacts.
      -- "network" says which; "num" is Meshtastic's node number, null elsewhere. SQLite cannot
      -- drop a NOT NULL, so the table is rebuilt.
      CREATE TABLE nodes_next (
        node_id         TEXT PRIMARY KEY,
        network         TEXT NOT NULL DEFAULT 'meshtastic',
        num             INTEGER,
        interface_id    TEXT NOT NULL,
        long_name       TEXT,
        short_name      TEXT,
        hw_model        TEXT,
        role            TEXT,
        position        TEXT CHECK (position IS NULL OR json_valid(position)),
        device_metrics  TEXT CHECK (device_metrics IS NULL OR json_valid(device_metrics)),
        snr_db          REAL,
        hops_away       INTEGER,
        via_mqtt        INTEGER NOT NULL DEFAULT 0,
        last_heard_at   TEXT,
        updated_at      TEXT NOT NULL
      );
      INSERT INTO nodes_next (node_id, num, interface_id, long_name, short_name, hw_model, role, position, device_metrics, snr_db, hops_away, via_mqtt, last_heard_at, updated_at)
        SELECT node_id, num, interface_id, long_name, short_name, hw_model, role, position, device_metrics, snr_db, hops_away, via_mqtt, last_heard_at, updated_at FROM nodes;
      DROP TABLE nodes;
      ALTER TABLE nodes_next RENAME TO nodes;
      CREATE INDEX nodes_interface ON nodes (interface_id, node_id);
    `,
  },
  {
    version: 11,
    name: 'flash_writes',
    sql: `
      -- Issue 22: every index is written by the commits that change its rows, so one no query
      -- needs is dropped (docs/data-model.md lists each remaining one with its query).
      -- deliveries_state (state, updated_at) moved twice with every delivery; the queries that
      -- used it read the partial indexes below and the queue's (deliveries_queued) instead.
      DROP INDEX deliveries_state;
      -- Dead letters (the dead letter queue, bulk retry and cancel): written only when one dies.
      CREATE INDEX deliveries_dead ON deliveries (id) WHERE state = 'dead';
      -- Deliveries on the air: expiry of those still sending, recovery after a crash, queue
      -- depth. A 'sending' mark is committed only for a send that outlives a group commit.
      CREATE INDEX deliveries_sending ON deliveries (interface_id, expires_ms) WHERE state = 'sending';
      -- Cancelled and expired ones, for the counts by state: a delivered one is the total less
      -- every other state, so the bulk of the table (delivered) needs no index of its own.
      CREATE INDEX deliveries_unsent ON deliveries (state) WHERE state IN ('cancelled', 'expired');
      -- audit_log without AUTOINCREMENT: each insert also wrote sqlite_sequence. A rowid is one
      -- more than the largest kept, and retention deletes the oldest, so ids still only grow.
      CREATE TABLE audit_log_next (
        id          INTEGER PRIMARY KEY,
        at          TEXT NOT NULL,
        key_id      TEXT,
        method      TEXT NOT NULL,
        path        TEXT NOT NULL,
        status      INTEGER NOT NULL,
        request_id  TEXT NOT NULL
      );
      INSERT INTO audit_log_next (id, at, key_id, method, path, status, request_id)
        SELECT id, at, key_id, method, path, status, request_id FROM audit_log;
      DROP TABLE audit_log;
      ALTER TABLE audit_log_next RENAME TO audit_log;
    `,
  },
  {
    version: 12,
    name: 'senders',
    sql: `
      -- Issue 17 (docs/senders.md): the senders policy (one row), per-sender counters and token
      -- buckets, and the cost view's daily usage. Addresses are lower-cased. The counters and
      -- buckets are written in the transaction that stores the message, so they survive a
      -- restart with it.
      CREATE TABLE sender_policy (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        policy      TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE senders (
        address        TEXT PRIMARY KEY,
        messages_in    INTEGER NOT NULL DEFAULT 0,
        forwards       INTEGER NOT NULL DEFAULT 0,
        limited        INTEGER NOT NULL DEFAULT 0,
        blocked        INTEGER NOT NULL DEFAULT 0,
        first_seen_at  TEXT NOT NULL,
        last_seen_at   TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE sender_buckets (
        address    TEXT NOT NULL,
        limit_key  TEXT NOT NULL,
        tokens     REAL NOT NULL,
        at_ms      INTEGER NOT NULL,
        PRIMARY KEY (address, limit_key)
      ) WITHOUT ROWID;
      -- What was sent per interface and UTC day (GET /api/messages/stats usage): written in
      -- the transaction that records a delivery as delivered.
      CREATE TABLE usage_daily (
        interface_id     TEXT NOT NULL,
        day              TEXT NOT NULL,
        deliveries       INTEGER NOT NULL DEFAULT 0,
        frames           INTEGER NOT NULL DEFAULT 0,
        bytes            INTEGER NOT NULL DEFAULT 0,
        sms_parts        INTEGER NOT NULL DEFAULT 0,
        iridium_credits  INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (interface_id, day)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 13,
    name: 'clock_state',
    sql: `
      -- Issue 30 (docs/decisions.md, "a clock a Raspberry Pi cannot trust"): the latest time the
      -- bridge knew to be good, advanced while it runs, and what set it. A start whose system
      -- clock is behind it counts on from it instead.
      CREATE TABLE clock_state (
        id            INTEGER PRIMARY KEY CHECK (id = 1),
        last_good_ms  INTEGER NOT NULL,
        source        TEXT NOT NULL
      );
    `,
  },
  {
    version: 14,
    name: 'usage_by_unit',
    sql: `
      -- What a billed delivery spent, per interface, UTC day and billing unit (the unit its
      -- kind's driver module names): a new kind that bills adds rows, not columns. The counts
      -- of the two units usage_daily had columns for carry over.
      CREATE TABLE usage_daily_units (
        interface_id  TEXT NOT NULL,
        day           TEXT NOT NULL,
        unit          TEXT NOT NULL,
        amount        INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (interface_id, day, unit)
      ) WITHOUT ROWID;
      INSERT INTO usage_daily_units (interface_id, day, unit, amount)
        SELECT interface_id, day, 'sms_parts', sms_parts FROM usage_daily WHERE sms_parts <> 0;
      INSERT INTO usage_daily_units (interface_id, day, unit, amount)
        SELECT interface_id, day, 'iridium_credits', iridium_credits FROM usage_daily WHERE iridium_credits <> 0;
      ALTER TABLE usage_daily DROP COLUMN sms_parts;
      ALTER TABLE usage_daily DROP COLUMN iridium_credits;
    `,
  },
  {
    version: 15,
    name: 'queue_indexes',
    sql: `
      -- The queue's index with the state before the precedence: the dispatcher's reads and the
      -- hold of an interface that went down seek the pending and retrying deliveries and never
      -- walk the held ones (100,000 of them behind a satellite modem switched off); the eviction
      -- candidate is the first entry of a (state, precedence) range, not a sort of the queue.
      DROP INDEX deliveries_queued;
      CREATE INDEX deliveries_queued ON deliveries (interface_id, state, precedence, id, next_attempt_ms, size) WHERE state IN ('pending', 'held', 'retrying');
      -- Held deliveries by the node they wait for first: "is anything held for this node" (every
      -- frame heard) is a seek, not a walk of every held delivery; the interface's own holds
      -- (until_heard NULL) are a seek too.
      DROP INDEX deliveries_held;
      CREATE INDEX deliveries_held ON deliveries (until_heard COLLATE NOCASE, interface_id) WHERE state = 'held';
    `,
  },
  {
    version: 16,
    name: 'node_identity',
    sql: `
      -- A node is more than its number (docs/api.md, "Nodes"): a Meshtastic node's public key
      -- (NodeInfo User.public_key, base64) and the ids it had before. Firmware 2.8 numbers a node
      -- by the CRC-32 of its key, so an upgraded node reappears under a new number with the same
      -- key; the old id then names the node at its new one (engine/node-identity.ts).
      ALTER TABLE nodes ADD COLUMN public_key TEXT;
      CREATE INDEX nodes_public_key ON nodes (public_key) WHERE public_key IS NOT NULL;
      --   former_id    an id the node had (the key of every lookup)
      --   node_id      the id it has now (chains are kept flat: always the newest)
      --   changed_at   when the bridge saw it change
      CREATE TABLE node_aliases (
        former_id   TEXT PRIMARY KEY,
        node_id     TEXT NOT NULL,
        network     TEXT NOT NULL,
        public_key  TEXT NOT NULL,
        changed_at  TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX node_aliases_node ON node_aliases (node_id);
    `,
  },
  {
    version: 17,
    name: 'event_log',
    sql: `
      -- What GET /api/events replays to a client that reconnects (docs/events.md). The bridge
      -- keeps its recent events in memory and writes them here only when it stops (nothing per
      -- event: the SD card's writes per message do not grow), and reads them back at start.
      -- event_ids: ids are reserved in blocks, so a bridge that crashed never gives out an id
      -- again; \`clean\` says whether the last run saved its events.
      CREATE TABLE event_log (
        id            INTEGER PRIMARY KEY,
        at            TEXT NOT NULL,
        type          TEXT NOT NULL,
        interface_id  TEXT,
        kind          TEXT,
        data          TEXT NOT NULL
      );
      CREATE TABLE event_ids (
        one           INTEGER PRIMARY KEY CHECK (one = 1),
        reserved_to   INTEGER NOT NULL,
        saved_to      INTEGER NOT NULL,
        clean         INTEGER NOT NULL
      );
      INSERT INTO event_ids (one, reserved_to, saved_to, clean) VALUES (1, 0, 0, 1);
    `,
  },
];
