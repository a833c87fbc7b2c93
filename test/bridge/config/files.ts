import { createHash } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import * as assert from 'uvu/assert';
import type { Call } from '../../helpers/api.ts';

// Shared by the configuration file tests (export, import, diff, round trip): a checksum of
// the configuration tables, the configuration of a well-furnished bridge, and small helpers.

/** The tables import replaces. History (messages, deliveries, audit_log, api_keys) is not here. */
export const CONFIG_TABLES = ['config_sections', 'interfaces', 'access_rules', 'rule_refs', 'object_groups', 'contacts', 'sender_policy'] as const;

/** SHA-256 over every row of the configuration tables, in a fixed order. */
export function configChecksum(db: DatabaseSync): string {
  const hash = createHash('sha256');
  for (const table of CONFIG_TABLES) {
    const columns = (db.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all() as Array<{ name: string }>).map((c) => c.name);
    const rows = db.prepare(`SELECT * FROM ${table} ORDER BY ${columns.map((_, i) => i + 1).join(', ')}`).all();
    hash.update(`${table}\n${JSON.stringify(rows)}\n`);
  }
  return hash.digest('hex');
}

/** Calls and asserts the status (200 unless told); returns the body. */
export async function ok(call: Call, method: string, path: string, body?: unknown, status = 200): Promise<any> {
  const r = await call(method, path, body === undefined ? {} : { body });
  assert.is(r.status, status, `${method} ${path}: ${r.text}`);
  return r.body;
}

/** A create: POST answering 201. */
export const created = (call: Call, path: string, body: unknown) => ok(call, 'POST', path, body, 201);

export const HUB = { enabled: false, mqtt_url: 'mqtts://hub.example.org:8883', tenant: 'ten_1', bridge_id: 'ridge-3', username: 'ridge', password: 's3cret' };

/**
 * Every kind of thing a configuration file carries, none of it at its default: sections and
 * modules, a sim interface with transforms and a retry policy, a disabled one, an rnode with a
 * preset, an iridium interface with a credit budget, groups, contacts, and rules with
 * schedules, @group and @contact references and a disabled one, reordered after creation.
 * The hub uplink stays disabled so no test dials a broker.
 */
export async function furnish(call: Call, simChannel: string): Promise<void> {
  await ok(call, 'POST', '/api/config/module', { section: 'bridge', settings: { name: 'ridge-3', timezone: 'Europe/Berlin' } });
  await ok(call, 'POST', '/api/config/module', { section: 'routing', settings: { default_action: 'drop', rate_limit: { sends_per_minute: 0, burst: 50 } } });
  await ok(call, 'POST', '/api/config/module', { section: 'hub', settings: HUB });
  await ok(call, 'POST', '/api/config/radio', { region: 'EU_868', hop_limit: 4 });
  await ok(call, 'POST', '/api/config/owner', { long_name: 'Ridge 3 gateway', short_name: 'R3' });
  await ok(call, 'POST', '/api/config/module', { section: 'canned_message', settings: { enabled: true, messages: ['OK', 'SOS'] } });
  await ok(call, 'POST', '/api/config/module', { section: 'beacon', settings: { enabled: true, interval: 600, text: 'DL0ABC ridge 3' } });

  await created(call, '/api/interfaces', {
    name: 'mesh', kind: 'sim', device: `sim://${simChannel}-mesh`, settings: { mtu: 200 },
    transforms: { inbound: [{ type: 'strip_non_gsm7' }], outbound: [{ type: 'prefix', text: '{from}: ' }, { type: 'split', max_bytes: 120 }] },
    retry: { base_s: 2, cap_s: 60, max_attempts: 3, ttl_s: 3600 },
  });
  await created(call, '/api/interfaces', { name: 'lab', kind: 'sim', enabled: false, device: `sim://${simChannel}-lab` });
  await created(call, '/api/interfaces', { name: 'lora', kind: 'rnode', settings: { preset: 'eu-868', callsign: 'DL0ABC', st_alock: 10 } });
  await created(call, '/api/interfaces', { name: 'sat', kind: 'iridium', settings: { mailbox_check_s: 3600, credits_per_day: 20 } });

  await created(call, '/api/object-groups', { name: 'ops', members: ['!a1b2c3d4', '+4917012345678'] });
  await created(call, '/api/object-groups', { name: 'field', members: ['!00000001'] });
  await created(call, '/api/contacts', { name: 'ann', addresses: { mesh: '!0000beef', sms: '+4915100000000' } });
  await created(call, '/api/contacts', { name: 'bob', addresses: { rnode: 'bob-1' } });

  await created(call, '/api/access-rules', {
    name: 'night-relay', match: { direction: 'inbound', interfaces: ['mesh'], from: ['@ops'] },
    schedule: { timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '22:00', end: '06:00' }], active_from: '2026-01-01T00:00:00Z' },
    action: 'forward', destinations: [{ interface: 'lora', to: '@ann' }, { interface: 'sat', to: '@field' }],
  });
  await created(call, '/api/access-rules', { name: 'drop-spam', enabled: false, match: { text: { contains: 'spam' } }, schedule: null, action: 'drop' });
  await created(call, '/api/access-rules', { name: 'to-ann', match: { direction: 'outbound', to: ['@ann'] }, schedule: null, action: 'forward', destinations: [{ interface: 'mesh', to: '!0000beef' }] });
  await created(call, '/api/access-rules', { name: 'to-lab', match: { to: ['!1ab'] }, schedule: null, action: 'forward', destinations: [{ interface: 'lab', to: '!1ab' }] });
  await ok(call, 'POST', '/api/access-rules/reorder', { order: ['to-ann', 'night-relay', 'drop-spam', 'to-lab'] });
  await ok(call, 'PUT', '/api/senders/policy', SENDERS);
}

export const SENDERS = { limits: [{ kinds: ['iridium', 'sms'], per_hour: 5, burst: 3 }], blocklist: ['!deadbeef', '@field'], allowlist: null };

/** The export's text (asserting a 200). */
export async function exportText(call: Call, query = ''): Promise<string> {
  const r = await call('GET', `/api/config/export${query}`);
  assert.is(r.status, 200, r.text);
  return r.text;
}

/** The file without its exported_at line: what must match between two exports. */
export const withoutExportedAt = (text: string) => text.replace(/^ {2}"exported_at": "[^"]*",\n/m, '');

/** POSTs a configuration file given as text or as an object. */
export function postFile(call: Call, path: '/api/config/import' | '/api/config/diff', file: string | object, key?: string | null) {
  const rawBody = typeof file === 'string' ? file : JSON.stringify(file);
  return call('POST', path, { rawBody, headers: { 'content-type': 'application/json' }, ...(key === undefined ? {} : { key }) });
}

export const errorPaths = (body: any): string[] => (body.errors ?? []).map((e: { path: string }) => e.path).sort();
