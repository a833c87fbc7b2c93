// Hub ingest: events per second and CPU per event through the hub's MQTT
// ingest, on SQLite and PostgreSQL, with 1 and 4 publishers at full speed, each beside raw
// inserts of the same rows measured in the same run, and the count of events lost.
//
//   broker:    a private Mosquitto on a free port, no persistence, max_inflight_messages 20
//              (stock) and max_queued_messages 100,000 as docs/hub.md asks of a hub's broker.
//              With 4 publishers the hub run is repeated with the stock max_queued_messages
//              (1000) and what the broker dropped is shown beside it.
//   hub:       startHub in this process on a fresh database (a SQLite file in a temporary
//              folder; a new PostgreSQL database), subscribed as it is in production (MQTT 5,
//              persistent session, QoS 1).
//   publishers: child processes (so their CPU is not the hub's), each one MQTT client that
//              publishes its events at QoS 1 as fast as the broker takes them, like a bridge
//              draining a long outbox. Each event is a telemetry JSON of about 280 bytes,
//              signed as an enrolled bridge signs it (the hub checks an
//              HMAC-SHA256 per event, counted in its CPU; the raw baseline has no such check).
//   events/s:  events stored / time from the go signal until the last one is stored.
//   lost:      events published (every publisher got its PUBACKs) but not stored once the
//              count has stopped moving for 5 s.
//   CPU/event: user + system CPU of this process (the hub) over the run / events stored; for
//              PostgreSQL also the server backends of the database (/proc/<pid>/stat), so
//              work moved to the server is not hidden.
//   raw:       the same rows (same ids, bodies, timestamps) inserted into a fresh database of
//              the same schema from this process, no MQTT: SQLite with one prepared INSERT per
//              row, one transaction per 500 rows; PostgreSQL with one multi-row INSERT of 500
//              rows per transaction (postgres.js `sql(rows)`). Same CPU accounting.
//   floor:     an mqtt.js subscriber connected as the hub is (MQTT 5, QoS 1, the hub's receive
//              maximum) that only takes each message and lets mqtt.js acknowledge it: no JSON,
//              no signature, no database. What any hub on this MQTT client costs at least; the
//              hub's own work is what it spends above it. Measured in the first store's rounds.
//   checks:    the hub's own per-event checks alone, in this process on the same signed
//              payloads: verifyPayload (the HMAC-SHA256 of every signed event) and decodeForIngest (JSON
//              and the event's fields), the functions the ingest calls. No MQTT, no database.
//              With the raw insert and the mqtt.js floor it gives the least a hub that checks
//              each event can cost: "bound" = (raw + checks + floor) / raw, and without the MQTT
//              client at all, (raw + checks) / raw.
//
// Targets: 0 lost; >= 8,000 events/s on PostgreSQL and >= 20,000 on SQLite; hub CPU
// per event at most 2x the raw inserts.
//
//   BENCH_HUB_EVENTS=9000      events per publisher
//   BENCH_HUB_ROUNDS=3         raw and hub alternate; the median round (CPU per event) of each
//                              is reported, lost events from the worst round
//   BENCH_HUB_STOCK=0          skips the stock-queue run (for sweeping the settings below)
//   BENCH_HUB_MAX_BATCH, BENCH_HUB_FLUSH_MS, BENCH_HUB_RECEIVE_MAX   override the hub's defaults
//   BENCH_HUB_DEBUG=1          prints each publisher's time and CPU
//   BENCH_HUB_PG_URL           server for the PostgreSQL runs (default postgres://postgres@127.0.0.1:5432/postgres;
//                              "off" skips them)

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { connect } from 'mqtt';
import postgres from 'postgres';
import { startHub } from '../src/hub/app.ts';
import { RECEIVE_MAXIMUM } from '../src/hub/ingest/subscriber.ts';
import { openHubStore } from '../src/hub/store/store.ts';
import { createLogger } from '../src/lib/log.ts';
import { decodeForIngest } from '../src/hub/ingest/decode.ts';
import { ingestSubscription } from '../src/hubwire/topics.ts';
import { mintEnrollmentToken, signingKey, signPayload, verifyPayload } from '../src/hubwire/credentials.ts';

const EVENTS = Math.max(100, Math.min(200_000, Number(process.env.BENCH_HUB_EVENTS ?? 9000) || 9000));
const PG_URL = process.env.BENCH_HUB_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TENANT = 'bench';
const RAW_BATCH = 500;
const STALL_MS = 5000;
const ROUNDS = Math.max(1, Math.min(9, Number(process.env.BENCH_HUB_ROUNDS ?? 3) || 3));
// For profiling one case: BENCH_HUB_STORES=sqlite BENCH_HUB_PUBLISHERS=4.
const STORES = (process.env.BENCH_HUB_STORES ?? 'sqlite,postgres').split(',') as Array<'sqlite' | 'postgres'>;
const PUBLISHERS = (process.env.BENCH_HUB_PUBLISHERS ?? '1,4').split(',').map(Number);
const TARGET = { sqlite: 20_000, postgres: 8000, cpuRatio: 2 };

function envInt(name: string): number | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : Number(v);
}

// ---- publisher child -------------------------------------------------------------------------

function eventBody(bridge: string, i: number): string {
  return JSON.stringify({
    event_id: `evt_${bridge}_${String(i).padStart(6, '0')}`,
    ts: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    interface: 'lora0',
    node: '!a1b2c3d4',
    battery: 87 + (i % 10),
    voltage: 3.91,
    rssi: -97 - (i % 20),
    snr: 6.25,
    uptime_s: 86_400 + i,
    channel_util: 12.5,
    air_util_tx: 3.1,
    text: 'field station telemetry sample with a little text to be realistic',
  });
}

async function publisherMain(url: string, bridge: string, count: number, secret: Buffer): Promise<void> {
  const client = connect(url, { clientId: `bench-pub-${bridge}-${process.pid}`, protocolVersion: 5, reconnectPeriod: 0, clean: true });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  const topic = `fieldbridge/v1/${TENANT}/${bridge}/telemetry`;
  // Signed as an enrolled bridge signs them, before the clock starts: the
  // hub's check of each signature is part of what is measured, the publisher's signing not.
  const bodies = Array.from({ length: count }, (_, i) => signPayload(secret, topic, eventBody(bridge, i)));
  process.send!({ ready: true });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(bodies.map((b) => client.publishAsync(topic, b, { qos: 1 })));
  const c = process.cpuUsage(c0);
  process.send!({ done: true, cpuMs: (c.user + c.system) / 1000, ms: performance.now() - t0 });
  await client.endAsync();
}

// ---- measurement helpers ---------------------------------------------------------------------

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const TICK_MS = 1000 / 100; // USER_HZ on Linux
function procCpuMs(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Mosquitto's stock queue limit, and the one docs/hub.md asks for on a hub's broker. */
const QUEUE = { stock: 1000, documented: 100_000 } as const;
type BrokerConfig = keyof typeof QUEUE;

async function startBroker(dir: string, config: BrokerConfig): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const conf = join(dir, `mosquitto-${port}.conf`);
  // max_inflight_messages 20 is the stock value, written out so a changed distribution default
  // does not change the benchmark; max_queued_messages is the one difference between the two.
  writeFileSync(conf, [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'max_inflight_messages 20', `max_queued_messages ${QUEUE[config]}`, 'user root', 'log_dest none', ''].join('\n'));
  const child = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
  let spawnError: Error | undefined;
  child.once('error', (e) => (spawnError = e));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (spawnError) throw new Error(`mosquitto did not start: ${spawnError.message}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = tcpConnect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface PgDb {
  url: string;
  backendCpuMs(): Promise<number>;
  drop(): Promise<void>;
}

async function pgDatabase(admin: postgres.Sql): Promise<PgDb> {
  const name = `fb_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(PG_URL);
  url.pathname = '/' + name;
  return {
    url: url.toString(),
    backendCpuMs: async () => {
      const rows = await admin.unsafe('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
      return rows.reduce((sum, r) => sum + procCpuMs(Number(r.pid)), 0);
    },
    drop: async () => void (await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

interface Figures {
  events: number;
  stored: number;
  ms: number;
  cpuMs: number;
  serverCpuMs: number;
}

// The rows the hub would store for these publishers, built the way the hub builds them.
function rawRows(publishers: number): Array<[string, string, string, string, string, string]> {
  const at = new Date().toISOString();
  const rows: Array<[string, string, string, string, string, string]> = [];
  for (let p = 0; p < publishers; p++) {
    const bridge = `brg-${p}`;
    for (let i = 0; i < EVENTS; i++) {
      const body = eventBody(bridge, i);
      const v = JSON.parse(body) as { event_id: string; ts: string };
      rows.push([TENANT, v.event_id, bridge, v.ts, body, at]);
    }
  }
  return rows;
}

async function rawSqlite(dir: string, publishers: number): Promise<Figures> {
  const path = join(dir, `raw-${publishers}.db`);
  (await openHubStore({ sqlitePath: path })).close();
  const rows = rawRows(publishers);
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000');
  const insert = db.prepare('INSERT INTO telemetry (tenant_id, event_id, bridge_id, ts, body, received_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, event_id) DO NOTHING');
  const cpu0 = cpuMs();
  const t0 = performance.now();
  for (let i = 0; i < rows.length; i += RAW_BATCH) {
    db.exec('BEGIN IMMEDIATE');
    for (const r of rows.slice(i, i + RAW_BATCH)) insert.run(...r);
    db.exec('COMMIT');
  }
  const ms = performance.now() - t0;
  const cpu = cpuMs() - cpu0;
  const stored = Number((db.prepare('SELECT count(*) AS n FROM telemetry').get() as { n: number }).n);
  db.close();
  return { events: rows.length, stored, ms, cpuMs: cpu, serverCpuMs: 0 };
}

async function rawPostgres(admin: postgres.Sql, publishers: number): Promise<Figures> {
  const pg = await pgDatabase(admin);
  try {
    (await openHubStore({ databaseUrl: pg.url }, { maxConnections: 1 })).close();
    const rows = rawRows(publishers).map(([tenant_id, event_id, bridge_id, ts, body, received_at]) => ({ tenant_id, event_id, bridge_id, ts, body, received_at }));
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    await sql`SELECT 1`;
    const server0 = await pg.backendCpuMs();
    const cpu0 = cpuMs();
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += RAW_BATCH) {
      await sql`INSERT INTO telemetry ${sql(rows.slice(i, i + RAW_BATCH))} ON CONFLICT (tenant_id, event_id) DO NOTHING`;
    }
    const ms = performance.now() - t0;
    const cpu = cpuMs() - cpu0;
    const server = (await pg.backendCpuMs()) - server0;
    const stored = Number((await sql`SELECT count(*)::int AS n FROM telemetry`)[0].n);
    await sql.end({ timeout: 5 });
    return { events: rows.length, stored, ms, cpuMs: cpu, serverCpuMs: server };
  } finally {
    await pg.drop();
  }
}

/** Publisher children on the broker, each ready to publish its events on 'go'; `done` resolves
 *  when each reports its last PUBACK. */
async function startPublishers(brokerUrl: string, secrets: string[]): Promise<{ children: ChildProcess[]; go(): void; done: Promise<void> }> {
  const children: ChildProcess[] = [];
  const done: Array<Promise<void>> = [];
  for (let p = 0; p < secrets.length; p++) {
    const child = fork(import.meta.filename, ['--publisher', brokerUrl, `brg-${p}`, String(EVENTS), secrets[p]], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`publisher exited with ${code}`)));
    });
    done.push(new Promise<void>((resolve) => child.on('message', (m: { done?: boolean; cpuMs?: number; ms?: number }) => {
      if (!m.done) return;
      if (process.env.BENCH_HUB_DEBUG) console.log(`publisher ${p}: ${m.ms!.toFixed(0)} ms, ${m.cpuMs!.toFixed(0)} ms CPU`);
      resolve();
    })));
  }
  return { children, go: () => children.forEach((c) => c.send('go')), done: Promise.all(done).then(() => {}) };
}

/** Looks at `counted` every 50 ms until `total` or a stall; the time and CPU are taken when the
 *  count last moved, so a stall's idle wait is not in them. */
async function watchCount(counted: () => number, total: number): Promise<{ ms: number; cpuMs: number }> {
  const cpu0 = cpuMs();
  const t0 = performance.now();
  let seen = 0;
  let lastAt = t0;
  let cpu = 0;
  while (seen < total) {
    await new Promise((r) => setTimeout(r, 50));
    const n = counted();
    const now = performance.now();
    if (n !== seen) {
      seen = n;
      lastAt = now;
      cpu = cpuMs() - cpu0;
    } else if (now - lastAt > STALL_MS) break;
  }
  return { ms: lastAt - t0, cpuMs: cpu };
}

async function hubRun(dir: string, store: 'sqlite' | 'postgres', publishers: number, admin: postgres.Sql | null, config: BrokerConfig): Promise<Figures> {
  const broker = await startBroker(dir, config);
  const pg = store === 'postgres' ? await pgDatabase(admin!) : null;
  const quiet = createLogger({ level: 'error', format: 'json', write: () => {} });
  let children: ChildProcess[] = [];
  const hub = await startHub({
    store: pg ? { databaseUrl: pg.url } : { sqlitePath: join(dir, `hub-${publishers}-${Date.now()}.db`) },
    host: '127.0.0.1',
    port: 0,
    log: quiet,
    mqtt: {
      url: broker.url,
      shared: false,
      clientId: `bench-hub-${process.pid}`,
      sessionExpiryS: 0,
      // For measuring the choices in docs/hub.md; unset, the hub's defaults are measured.
      maxBatch: envInt('BENCH_HUB_MAX_BATCH'),
      flushDelayMs: envInt('BENCH_HUB_FLUSH_MS'),
      receiveMaximum: envInt('BENCH_HUB_RECEIVE_MAX'),
    },
  });
  try {
    await hub.store.ensureTenant(TENANT, new Date().toISOString());
    // Each publisher is an enrolled bridge. Its enrollment is written as the exchange leaves it
    // (secret set, first signed event seen), under the bridge id the raw baseline uses, so the
    // rows stored are the baseline's byte for byte; the exchange itself is not measured here.
    const secrets: string[] = [];
    for (let p = 0; p < publishers; p++) {
      const at = new Date().toISOString();
      const token = mintEnrollmentToken();
      secrets.push(randomBytes(32).toString('base64url'));
      await hub.store.insertEnrollment({ id: `brg-${p}`, tenant_id: TENANT, name: `publisher ${p}`, token_lookup: token.lookup, token_hash: token.hash, secret: secrets[p], created_at: at, enrolled_at: at, verified_at: at, revoked_at: null });
    }
    for (let w = 0; hub.ingest!.state() !== 'connected'; w++) {
      if (w > 200) throw new Error('the hub did not subscribe');
      await new Promise((r) => setTimeout(r, 50));
    }
    const pubs = await startPublishers(broker.url, secrets);
    children = pubs.children;
    const total = publishers * EVENTS;
    // Progress from the hub's own counter (bumped after each commit), not a count(*) every
    // 50 ms, which would add its own database work to the hub's CPU; the figure reported is
    // the database's count at the end.
    const counted = () => Number(/fieldbridge_hub_ingest_total\{kind="telemetry",result="stored"\} (\d+)/.exec(hub.metrics.render())?.[1] ?? 0);
    const server0 = pg ? await pg.backendCpuMs() : 0;
    pubs.go();
    const { ms, cpuMs: cpu } = await watchCount(counted, total);
    // The server is idle once the hub is (a stall's wait adds nothing to it).
    const server = pg ? (await pg.backendCpuMs()) - server0 : 0;
    const stored = await hub.store.countEvents(TENANT, 'telemetry');
    await Promise.race([pubs.done, new Promise((r) => setTimeout(r, 10_000))]);
    return { events: total, stored, ms, cpuMs: cpu, serverCpuMs: server };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
    await hub.close(1000);
    await broker.stop();
    await pg?.drop();
  }
}

/**
 * The floor under any hub built on mqtt.js: a subscriber connected as the hub is (MQTT 5,
 * QoS 1, the hub's receive maximum) that takes each message and lets mqtt.js acknowledge it,
 * and does nothing else: no JSON, no signature, no database. What the hub spends above it is
 * its own; what this costs against the raw inserts says how close 2x can come with this client.
 */
async function floorRun(dir: string, publishers: number): Promise<Figures> {
  const broker = await startBroker(dir, 'documented');
  const client = connect(broker.url, { clientId: `bench-floor-${process.pid}`, protocolVersion: 5, clean: false, reconnectPeriod: 0, properties: { sessionExpiryInterval: 0, receiveMaximum: RECEIVE_MAXIMUM }, log: () => {} });
  let children: ChildProcess[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    let received = 0;
    client.on('message', () => void received++);
    await client.subscribeAsync(ingestSubscription(false), { qos: 1 });
    const pubs = await startPublishers(broker.url, Array.from({ length: publishers }, () => randomBytes(32).toString('base64url')));
    children = pubs.children;
    const total = publishers * EVENTS;
    pubs.go();
    const { ms, cpuMs: cpu } = await watchCount(() => received, total);
    await Promise.race([pubs.done, new Promise((r) => setTimeout(r, 10_000))]);
    return { events: total, stored: received, ms, cpuMs: cpu, serverCpuMs: 0 };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
    await client.endAsync(true);
    await broker.stop();
  }
}

/**
 * CPU per event of the hub's own checks alone (see "checks" above): the median of 5 passes over
 * 4 x EVENTS payloads signed as the publishers sign them, after one pass to warm up.
 */
function checksUsPerEvent(): number {
  const secret = randomBytes(32);
  const key = signingKey(secret);
  const payloads: Array<{ topic: string; bytes: Buffer }> = [];
  for (let b = 0; b < 4; b++) {
    const bridge = `bench-checks-${b}`;
    const topic = `fieldbridge/v1/${TENANT}/${bridge}/telemetry`;
    for (let i = 0; i < EVENTS; i++) payloads.push({ topic, bytes: Buffer.from(signPayload(secret, topic, eventBody(bridge, i))) });
  }
  const pass = (): number => {
    const c0 = process.cpuUsage();
    for (const p of payloads) {
      const check = verifyPayload(key, p.topic, p.bytes);
      if (!check.ok || !decodeForIngest('telemetry', check.text).ok) throw new Error('bench-hub: a payload signed here did not pass the hub\'s checks');
    }
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / payloads.length;
  };
  pass();
  const runs = Array.from({ length: 5 }, pass).sort((a, b) => a - b);
  return runs[2];
}

/** The round with the median CPU per event; its rate is reported with it. */
function median(xs: Figures[]): Figures {
  return [...xs].sort((a, b) => usPer(a) - usPer(b))[Math.floor(xs.length / 2)];
}
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const usPer = (f: Figures) => ((f.cpuMs + f.serverCpuMs) * 1000) / Math.max(1, f.stored);
const hubUsPer = (f: Figures) => (f.cpuMs * 1000) / Math.max(1, f.stored);
const rate = (f: Figures) => (f.stored / f.ms) * 1000;

export async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-bench-hub-'));
  let admin = PG_URL === 'off' ? null : postgres(PG_URL, { max: 1, onnotice: () => {} });
  let pgSkipped = PG_URL === 'off' ? 'BENCH_HUB_PG_URL=off' : '';
  if (admin) {
    try {
      await admin`SELECT 1`;
    } catch (error) {
      pgSkipped = `no PostgreSQL at ${PG_URL}: ${(error as Error).message}`;
      await admin.end({ timeout: 1 }).catch(() => {});
      admin = null;
    }
  }
  let failed = false;
  try {
    process.stdout.write(
      `hub ingest (${EVENTS.toLocaleString('en-US')} telemetry events per publisher, QoS 1 at full speed; private Mosquitto, max_queued_messages ${fmt(QUEUE.documented)} as docs/hub.md asks, and stock ${fmt(QUEUE.stock)})\n`,
    );
    const floors = new Map<number, Figures>();
    const checksUs = checksUsPerEvent();
    process.stdout.write(`  ${'checks: signature + decode per event, alone'.padEnd(46)} ${''.padStart(8)}           ${checksUs.toFixed(1).padStart(6)} us CPU/event   (verifyPayload + decodeForIngest, no MQTT, no database)\n`);
    for (const store of STORES) {
      if (store === 'postgres' && !admin) {
        process.stdout.write(`  postgres: skipped (${pgSkipped})\n`);
        failed = true;
        continue;
      }
      for (const publishers of PUBLISHERS) {
        // Raw and hub alternate, ROUNDS times; the median round of each (by CPU per event) is
        // reported, so one slow moment of a shared machine does not decide the verdict.
        const raws: Figures[] = [];
        const hubs: Figures[] = [];
        // The mqtt.js floor, measured in the first store's rounds, in the same alternation.
        const measureFloor = !floors.has(publishers);
        const floorRuns: Figures[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          raws.push(store === 'sqlite' ? await rawSqlite(dir, publishers) : await rawPostgres(admin!, publishers));
          if (measureFloor) floorRuns.push(await floorRun(dir, publishers));
          hubs.push(await hubRun(dir, store, publishers, admin, 'documented'));
        }
        if (measureFloor) floors.set(publishers, median(floorRuns));
        const raw = median(raws);
        const hub = median(hubs);
        const floor = floors.get(publishers)!;
        // Events lost: the worst round, not the median one.
        const lost = Math.max(...hubs.map((h) => h.events - h.stored));
        const ratio = usPer(hub) / usPer(raw);
        const server = store === 'postgres' ? ` (hub ${hubUsPer(hub).toFixed(1)} + server ${((hub.serverCpuMs * 1000) / Math.max(1, hub.stored)).toFixed(1)})` : '';
        const rawServer = store === 'postgres' ? ` (client ${hubUsPer(raw).toFixed(1)} + server ${((raw.serverCpuMs * 1000) / raw.stored).toFixed(1)})` : '';
        const label = `${store}, ${publishers} publisher${publishers > 1 ? 's' : ''}`;
        process.stdout.write(`  ${`baseline: raw inserts, ${label}`.padEnd(46)} ${fmt(rate(raw)).padStart(8)} events/s  ${usPer(raw).toFixed(1).padStart(6)} us CPU/event${rawServer}\n`);
        process.stdout.write(
          `  ${`hub: MQTT ingest, ${label}`.padEnd(46)} ${fmt(rate(hub)).padStart(8)} events/s  ${usPer(hub).toFixed(1).padStart(6)} us CPU/event${server}   ratio ${ratio.toFixed(2)}x   lost ${fmt(lost)} of ${fmt(hub.events)}\n`,
        );
        process.stdout.write(
          `  ${`floor: mqtt.js receive + acknowledge only`.padEnd(46)} ${fmt(rate(floor)).padStart(8)} events/s  ${usPer(floor).toFixed(1).padStart(6)} us CPU/event   ${(usPer(floor) / usPer(raw)).toFixed(2)}x raw   (the hub's work above it: ${(hubUsPer(hub) - usPer(floor)).toFixed(1)} us${store === 'postgres' ? `, and the server's ${((hub.serverCpuMs * 1000) / Math.max(1, hub.stored)).toFixed(1)} us` : ''})\n`,
        );
        // The least any hub that checks each event can cost here, against the raw inserts.
        const boundWith = (usPer(raw) + checksUs + usPer(floor)) / usPer(raw);
        const boundWithout = (usPer(raw) + checksUs) / usPer(raw);
        process.stdout.write(
          `  ${'bound: raw + checks + mqtt.js floor'.padEnd(46)} ${''.padStart(8)}           ${(usPer(raw) + checksUs + usPer(floor)).toFixed(1).padStart(6)} us CPU/event   ${boundWith.toFixed(2)}x raw   (without any MQTT client: ${boundWithout.toFixed(2)}x)\n`,
        );
        if (publishers === 4 && process.env.BENCH_HUB_STOCK !== '0') {
          // The same run on a broker left at its stock queue limit: what a default install loses.
          const stock = await hubRun(dir, store, publishers, admin, 'stock');
          process.stdout.write(
            `  ${`hub: same, stock Mosquitto queue limit`.padEnd(46)} ${fmt(rate(stock)).padStart(8)} events/s  ${usPer(stock).toFixed(1).padStart(6)} us CPU/event   lost ${fmt(stock.events - stock.stored)} of ${fmt(stock.events)} (dropped by the broker)\n`,
          );
        }
        if (publishers === 4) {
          const target = TARGET[store];
          const met = lost === 0 && rate(hub) >= target && ratio <= TARGET.cpuRatio;
          failed ||= !met;
          process.stdout.write(
            `  target (${store}, 4 publishers): 0 lost, >= ${fmt(target)} events/s, CPU/event <= ${TARGET.cpuRatio}x raw: ${met ? 'MET' : 'NOT MET'} (${fmt(lost)} lost, ${fmt(rate(hub))} events/s, ${ratio.toFixed(2)}x)\n`,
          );
        }
      }
    }
  } finally {
    await admin?.end({ timeout: 5 });
    rmSync(dir, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

if (process.argv[2] === '--publisher') {
  await publisherMain(process.argv[3], process.argv[4], Number(process.argv[5]), Buffer.from(process.argv[6], 'base64url'));
} else if (import.meta.filename === process.argv[1]) {
  process.exitCode = await main();
}
