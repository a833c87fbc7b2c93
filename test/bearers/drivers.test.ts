import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contactAddressFields, DRIVERS, driverFor, INTERFACE_KINDS } from '../../src/bearers/drivers.ts';
import { SIM_COMMAND_OPTIONS, SIM_USAGE } from '../../src/bearers/shared/simulators/cli.ts';
import { runCommand } from '../helpers/process.ts';

// The driver registry (bearers/drivers.ts): a kind is its folder's index.ts module plus one
// line in the list, and every kind list the bridge shows is derived from that list.

const bearersDir = join(import.meta.dirname, '..', '..', 'src', 'bearers');
/** The one folder of bearers/ that is not a kind: links, codecs and the simulators' run loop several kinds use. */
const SHARED = 'shared';

test('every folder of bearers/ but shared/ is a kind: its index.ts module is registered, under its folder name, and nothing else is', async () => {
  const folders = readdirSync(bearersDir, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== SHARED);
  const found: string[] = [];
  for (const folder of folders) {
    assert.ok(existsSync(join(bearersDir, folder.name, 'index.ts')), `bearers/${folder.name}/ is a kind: it has an index.ts`);
    const exported = Object.values(await import(join(bearersDir, folder.name, 'index.ts'))) as Array<{ kind?: unknown }>;
    const module = exported.find((e) => typeof e === 'object' && e !== null && typeof e.kind === 'string');
    assert.ok(module, `${folder.name}/index.ts exports a driver module`);
    assert.is(module!.kind, folder.name, 'the folder is named after the kind');
    assert.is(driverFor(folder.name), module, `${folder.name} is in DRIVERS`);
    found.push(folder.name);
  }
  assert.equal([...found].sort(), [...INTERFACE_KINDS].sort());
  assert.equal(INTERFACE_KINDS, DRIVERS.map((d) => d.kind));
  assert.is(driverFor('smoke-signal'), undefined);
});

test('the sim kind is a complete example: settings, contact field, factory and stats', () => {
  const sim = driverFor('sim')!;
  assert.ok(sim.create && sim.stats && sim.meshTraffic);
  assert.equal(sim.settings.parse({}), { behaviour: 'deliver', fail_count: 1, latency_ms: 0, mtu: 230 });
  assert.is(sim.contact.field, 'mesh');
});

test('contact address fields: one per address family, each with its schema, in registry order', () => {
  const fields = contactAddressFields();
  assert.equal(fields.map((f) => f.field), ['mesh', 'rnode', 'iridium', 'sms', 'meshcore', 'url', 'tak_uid', 'callsign']);
  const meshcore = fields.find((f) => f.field === 'meshcore')!;
  assert.ok(meshcore.schema.safeParse('a1b2c3d4e5f6').success, 'a 6-byte key prefix');
  assert.not.ok(meshcore.schema.safeParse('!a1b2c3d4').success, 'not a Meshtastic node id');
  const sms = fields.find((f) => f.field === 'sms')!;
  assert.ok(sms.schema.safeParse('+4915112345678').success);
  assert.not.ok(sms.schema.safeParse('call me').success);
  assert.ok(sms.schema.safeParse(undefined).success, 'every address is optional');
  const url = fields.find((f) => f.field === 'url')!;
  assert.ok(url.schema.safeParse('https://hooks.example.com/fieldbridge').success);
  assert.not.ok(url.schema.safeParse('ftp://example.com/x').success, 'only http and https');
  const callsign = fields.find((f) => f.field === 'callsign')!;
  assert.ok(callsign.schema.safeParse('N0CALL-7').success);
  assert.not.ok(callsign.schema.safeParse('N0CALL-16').success, 'SSIDs are 0 to 15');
});

test('fieldbridge sim: usage and options come from the modules that bring a simulator', () => {
  for (const d of DRIVERS.filter((m) => m.simulator)) {
    assert.ok(SIM_USAGE.includes(`fieldbridge sim ${d.kind}`), `usage names sim ${d.kind}`);
    for (const option of Object.keys(d.simulator!.options)) assert.ok(option in SIM_COMMAND_OPTIONS, `--${option}`);
  }
});

test('fieldbridge sim <kind> --help prints that simulator\'s usage only; sim --help every one', () => {
  const kinds = DRIVERS.filter((m) => m.simulator).map((m) => m.kind);
  for (const kind of kinds) {
    const r = runCommand(['sim', kind, '--help']);
    assert.is(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(`fieldbridge sim ${kind}`), r.stdout);
    for (const other of kinds.filter((k) => k !== kind)) assert.not.ok(r.stdout.includes(`fieldbridge sim ${other} `), `sim ${kind} --help names sim ${other}: ${r.stdout}`);
  }
  const all = runCommand(['sim', '--help']);
  for (const kind of kinds) assert.ok(all.stdout.includes(`fieldbridge sim ${kind}`), kind);
});

test.run();
