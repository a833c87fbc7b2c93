import type { DatabaseSync } from 'node:sqlite';
import type { Clock } from '../../lib/clock.ts';
import { StartupError } from '../../lib/errors.ts';
import { TOPIC_SEGMENT, type UplinkEventKind } from '../../hubwire/topics.ts';
import { newId } from '../../lib/ids.ts';
import { maskUrlCredentials } from '../../lib/mask-url.ts';
import { enrollmentTokenLookup } from '../../hubwire/credentials.ts';
import type { Logger } from '../../lib/log.ts';
import type { Counter, MetricsRegistry } from '../../lib/metrics.ts';
import { brokerUrlProblem } from '../config/sections.ts';
import type { ConfigService } from '../config/service.ts';
import { UplinkOutbox } from './outbox.ts';
import type { UplinkConfig } from './config.ts';
import { UPLINK_STATES, UplinkPublisher } from './publisher.ts';

// Decides whether the bridge reports to a hub and with which settings (docs/design.md sections 4
// and 8): the `hub` config section, overridden at start by SERVICE_HUB_MQTT_URL,
// SERVICE_HUB_TENANT ("none" turns the uplink off) and SERVICE_HUB_ENROLL_TOKEN. A change to the
// hub section restarts the publisher. Events are queued only while the uplink is on, so a bridge without a hub does
// not grow an outbox nobody drains.

export interface UplinkEnv {
  mqttUrl?: string;
  tenant?: string;
  enrollToken?: string;
}


export function uplinkEnv(env: NodeJS.ProcessEnv): UplinkEnv {
  const mqttUrl = env.SERVICE_HUB_MQTT_URL?.trim() || undefined;
  const tenant = env.SERVICE_HUB_TENANT?.trim() || undefined;
  const problem = mqttUrl && mqttUrl !== 'none' ? brokerUrlProblem(mqttUrl) : null;
  if (problem) throw new StartupError(`SERVICE_HUB_MQTT_URL: expected mqtt://host[:port] or mqtts://host[:port], or "none": ${problem}`);
  if (tenant && tenant !== 'none' && !TOPIC_SEGMENT.test(tenant)) {
    throw new StartupError(`SERVICE_HUB_TENANT: expected 1 to 64 letters, digits, "_", "." or "-" starting with a letter or digit, or "none", got ${JSON.stringify(tenant)}`);
  }
  const enrollToken = env.SERVICE_HUB_ENROLL_TOKEN?.trim() || undefined;
  // Never echoed: a token is a credential (only its shape is named).
  if (enrollToken && !enrollmentTokenLookup(enrollToken)) throw new StartupError('SERVICE_HUB_ENROLL_TOKEN: expected an enrollment token as the hub\'s POST /api/bridges gave it (fbe_ followed by 12 + 1 + 43 characters); the value is not shown here');
  return { mqttUrl, tenant, ...(enrollToken ? { enrollToken } : {}) };
}

export class UplinkService {
  readonly #db: DatabaseSync;
  readonly #config: ConfigService;
  readonly #env: UplinkEnv;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #version: string;
  readonly #interfaces: () => unknown[];
  #publisher: UplinkPublisher | undefined;
  #restarting: Promise<void> = Promise.resolve();
  readonly #outbox: UplinkOutbox;
  readonly #counters: { dropped: Counter; refused: Counter } | undefined;

  constructor(deps: { db: DatabaseSync; config: ConfigService; env: UplinkEnv; log: Logger; clock: Clock; version: string; interfaces: () => unknown[]; metrics?: MetricsRegistry }) {
    this.#db = deps.db;
    this.#outbox = new UplinkOutbox(deps.db);
    if (deps.metrics) {
      const m = deps.metrics;
      // The outbox's depth, age and losses.
      this.#counters = {
        dropped: m.counter('fieldbridge_uplink_outbox_dropped_total', 'Uplink events dropped from a full outbox (the oldest telemetry and position events go first).'),
        refused: m.counter('fieldbridge_uplink_outbox_refused_total', 'Uplink events not written because the outbox was full of messages and deliveries, or because the event was larger than the hub takes (256 KiB), by kind.'),
      };
      // A bridge whose hub never answers (waiting_for_hub) is visible.
      m.gauge('fieldbridge_uplink_state', 'The hub uplink\'s state: 1 for the current one ("waiting_for_hub": connected to the broker, no hub has answered yet, nothing is published), 0 for the others; none while the uplink is off.', () =>
        this.#publisher ? UPLINK_STATES.map((state) => ({ labels: { state }, value: this.#publisher?.state() === state ? 1 : 0 })) : []);
      m.gauge('fieldbridge_uplink_outbox_rows', 'Events waiting for the hub\'s acknowledgement.', () => [{ labels: {}, value: this.outbox().rows }]);
      m.gauge('fieldbridge_uplink_outbox_bytes', 'Size of the events waiting for the hub\'s acknowledgement, as counted against hub.outbox_max_mb.', () => [{ labels: {}, value: this.outbox().bytes }]);
      m.gauge('fieldbridge_uplink_outbox_oldest_age_seconds', 'Age of the oldest event waiting for the hub\'s acknowledgement (0 when none).', () => [{ labels: {}, value: this.outbox().oldest_age_s }]);
    }
    this.#config = deps.config;
    this.#env = deps.env;
    this.#log = deps.log.child({ component: 'uplink' });
    this.#clock = deps.clock;
    this.#version = deps.version;
    this.#interfaces = deps.interfaces;
  }

  /** The bridge's stable id at the hub: the hub section's bridge_id, else one made at first start. */
  bridgeId(): string {
    const configured = (this.#config.section('hub') as { bridge_id: string | null }).bridge_id;
    if (configured) return configured;
    const row = this.#db.prepare("SELECT value FROM uplink_state WHERE name = 'bridge_id'").get() as { value: string } | undefined;
    if (row) return row.value;
    const id = newId('brg', this.#clock.now()).toLowerCase();
    this.#db.prepare("INSERT INTO uplink_state (name, value) VALUES ('bridge_id', ?)").run(id);
    return id;
  }

  /** The settings in force, or null when the uplink is off. */
  effective(): UplinkConfig | null {
    const hub = this.#config.section('hub') as { enabled: boolean; mqtt_url: string | null; tenant: string | null; username: string | null; password: string | null; enrollment_token?: string | null };
    if (this.#env.mqttUrl === 'none' || this.#env.tenant === 'none') return null;
    const mqtt_url = this.#env.mqttUrl ?? (hub.enabled ? hub.mqtt_url : null);
    const inForce = hub.enabled || this.#env.mqttUrl !== undefined;
    const tenant = this.#env.tenant ?? (inForce ? hub.tenant : null);
    const enrollment_token = this.#env.enrollToken ?? (inForce ? hub.enrollment_token ?? null : null);
    // An enrolled bridge (or one with a token to trade) learns its tenant from the hub.
    const enrolled = this.#outbox.credentials() !== null;
    if (!mqtt_url || (!tenant && !enrollment_token && !enrolled)) return null;
    return { mqtt_url, tenant: tenant ?? '', bridge_id: this.bridgeId(), username: hub.username, password: hub.password, enrollment_token };
  }

  start(): void {
    this.#apply();
    this.#config.on('change', (section) => {
      if (section === 'hub') this.#restarting = this.#restarting.then(() => this.#restart());
    });
  }

  /** Queues an event when the uplink is on; call inside the transaction that made the change.
   *  A full outbox refuses it (counted and logged); the caller's transaction goes on. */
  enqueue(kind: UplinkEventKind, payload: Record<string, unknown>): void {
    this.#publisher?.enqueue(kind, payload);
  }

  state(): string {
    return this.#publisher?.state() ?? 'off';
  }

  /** Who the bridge is at the hub: enrolled (with the hub's tenant and id) or not. */
  identity(): { tenant: string; bridge_id: string; enrolled: boolean } | null {
    return this.#publisher?.identity() ?? null;
  }

  /** The outbox as health and /metrics report it. */
  outbox(): { rows: number; bytes: number; max_bytes: number | null; oldest_age_s: number; dropped: number; refused: number } {
    const size = this.#publisher?.outboxSize() ?? (this.#db.isOpen ? { ...this.#outbox.size(), max_bytes: null } : { rows: 0, bytes: 0, max_bytes: null });
    const oldest = this.#db.isOpen ? this.#outbox.oldestCreatedAt() : null;
    const age = oldest ? Math.max(0, Math.round((this.#clock.now() - Date.parse(oldest)) / 1000)) : 0;
    const sum = (c: Counter | undefined) => (c ? c.samples('x').reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0) : 0);
    return { rows: size.rows, bytes: size.bytes, max_bytes: size.max_bytes, oldest_age_s: age, dropped: sum(this.#counters?.dropped), refused: sum(this.#counters?.refused) };
  }

  async close(): Promise<void> {
    await this.#restarting;
    await this.#publisher?.close();
    this.#publisher = undefined;
  }

  async #restart(): Promise<void> {
    await this.#publisher?.close();
    this.#publisher = undefined;
    this.#apply();
  }

  #apply(): void {
    const config = this.effective();
    if (!config) {
      const hub = this.#config.section('hub') as { enabled: boolean; mqtt_url: string | null };
      const turnedOff = this.#env.mqttUrl === 'none' || this.#env.tenant === 'none';
      if (!turnedOff && ((hub.enabled && hub.mqtt_url) || this.#env.mqttUrl)) {
        this.#log.warn('uplink_off', { note: 'a broker is set but no tenant, no enrollment token and no enrollment stored: give the bridge hub.enrollment_token (or SERVICE_HUB_ENROLL_TOKEN), or hub.tenant' });
      } else this.#log.info('uplink_off', { note: 'no hub configured (hub section disabled, or SERVICE_HUB_MQTT_URL/SERVICE_HUB_TENANT set to none)' });
      return;
    }
    try {
      const maxMb = (this.#config.section('hub') as { outbox_max_mb?: number }).outbox_max_mb ?? 64;
      this.#publisher = new UplinkPublisher({
        db: this.#db, log: this.#log, clock: this.#clock, config, version: this.#version, interfaces: this.#interfaces,
        outboxMaxBytes: maxMb * 1024 * 1024, counters: this.#counters,
      });
      this.#publisher.start();
      const who = this.#publisher.identity();
      if (who.enrolled && config.tenant && config.tenant !== who.tenant) {
        this.#log.warn('uplink_tenant_ignored', { configured: config.tenant, enrolled: who.tenant, note: 'this bridge is enrolled: it publishes under the tenant and bridge id the hub gave it, not hub.tenant' });
      }
      this.#log.info('uplink_on', { broker: maskUrlCredentials(config.mqtt_url), tenant: who.tenant || undefined, bridge_id: who.bridge_id || undefined, enrolled: who.enrolled, enrolling: !who.enrolled && !!config.enrollment_token });
    } catch (error) {
      this.#log.error('uplink_config_invalid', { error: (error as Error).message });
    }
  }
}
