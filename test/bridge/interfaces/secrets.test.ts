import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SmsModem } from '../../../src/bearers/sms/simulator/modem.ts';
import { SmsNetwork } from '../../../src/bearers/sms/simulator/network.ts';
import { serveSmsTcp } from '../../../src/bearers/sms/simulator/serve.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem } from '../../helpers/routing.ts';
import { createSmsInterface, waitOnline } from '../../helpers/sms.ts';

// Secret interface settings (an SMS interface's SIM PIN; bridge/interfaces/secrets.ts): never
// shown, exported or logged; writing the marker back keeps the stored value.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

const stored = (id: string) => t.bridge.services.interfaces.get(id).settings.pin;

test('the PIN is stored but every answer shows <redacted>; null stays null', async () => {
  const r = await t.call('POST', '/api/interfaces', { body: { name: 'gsm', kind: 'sms', settings: { pin: '4711' } } });
  assert.is(r.status, 201, r.text);
  assert.is(r.body.settings.pin, '<redacted>');
  assert.is((await t.call('GET', '/api/interfaces/gsm')).body.settings.pin, '<redacted>');
  assert.ok((await t.call('GET', '/api/interfaces')).body.items.every((i: { settings: { pin?: string } }) => i.settings.pin !== '4711'));
  assert.is(stored(r.body.id), '4711');
  const none = await t.call('POST', '/api/interfaces', { body: { name: 'gsm-nopin', kind: 'sms', settings: {} } });
  assert.is(none.body.settings.pin, null);
});

test('GET, edit, PUT: the marker keeps the PIN; a new PIN replaces it; null removes it', async () => {
  const row = (await t.call('GET', '/api/interfaces/gsm')).body;
  const put = (settings: Record<string, unknown>) => t.call('PUT', '/api/interfaces/gsm', { body: { name: row.name, settings, transforms: row.transforms, retry: row.retry } });
  assert.is((await put({ ...row.settings, max_parts: 3 })).status, 200);
  assert.is(stored(row.id), '4711', 'kept');
  assert.is(t.bridge.services.interfaces.get(row.id).settings.max_parts, 3);
  assert.is((await put({ ...row.settings, pin: '1234' })).status, 200);
  assert.is(stored(row.id), '1234');
  assert.is((await put({ ...row.settings, pin: null })).status, 200);
  assert.is(stored(row.id), null);
  assertProblem(await put({ ...row.settings, pin: '<redacted>' }), 400, ['body.settings.pin'], /no secret is stored to keep/);
  assertProblem(await put({ ...row.settings, pin: '12' }), 400, ['body.settings.pin']);
  assertProblem(await put({ ...row.settings, pin: 1234 }), 400, ['body.settings.pin']);
});

test('creating with the marker is refused: there is nothing to keep', async () => {
  assertProblem(await t.call('POST', '/api/interfaces', { body: { name: 'gsm2', kind: 'sms', settings: { pin: '<redacted>' } } }), 400, ['body.settings.pin']);
  assert.is((await t.call('GET', '/api/interfaces/gsm2')).status, 404, 'nothing was created');
});

test('export shows the marker; re-importing the file keeps the PIN; the PIN is in no log line', async () => {
  const id = (await t.call('GET', '/api/interfaces/gsm')).body.id;
  const row = (await t.call('GET', '/api/interfaces/gsm')).body;
  await t.call('PUT', '/api/interfaces/gsm', { body: { name: 'gsm', settings: { ...row.settings, pin: '8642' }, transforms: row.transforms, retry: row.retry } });
  const exported = await t.call('GET', '/api/config/export');
  assert.is(exported.status, 200);
  assert.not.match(exported.text, /8642/);
  const file = JSON.parse(exported.text);
  assert.is(file.interfaces.find((i: { name: string }) => i.name === 'gsm').settings.pin, '<redacted>');
  const diff = await t.call('POST', '/api/config/diff', { body: file });
  assert.is(diff.status, 200, diff.text);
  assert.not.ok(diff.body.changes?.some?.((c: { path: string }) => c.path.includes('pin')), 'the marker is no change');
  const imported = await t.call('POST', '/api/config/import', { body: file });
  assert.is(imported.status, 200, imported.text);
  assert.is(stored(id), '8642', 'the marker kept the stored PIN');
  assert.not.ok(t.logs.some((l) => l.includes('8642') || l.includes('4711')), 'no PIN in the log');
});

// Issue 14, item 3: a `sim_pin` on an sms interface was exported in clear. The sms settings are
// a strict schema now, and anything stored that the schema does not know is redacted too.

test('sim_pin is no sms setting: a write carrying it is refused and nothing is stored', async () => {
  const r = await t.call('POST', '/api/interfaces', { body: { name: 'gsm-sim-pin', kind: 'sms', settings: { sim_pin: '1357' } } });
  assertProblem(r, 400, [], /invalid settings for a sms interface/);
  assert.match(JSON.stringify(r.body.errors), /sim_pin/);
  assert.not.match(r.text, /1357/, 'the refusal does not echo the value');
  assert.is((await t.call('GET', '/api/interfaces/gsm-sim-pin')).status, 404);
});

test('a sim_pin stored before sms had a schema is <redacted> in answers and in the export of viewers and admins, like pin', async () => {
  const id = (await t.call('GET', '/api/interfaces/gsm')).body.id;
  const row = (await t.call('GET', '/api/interfaces/gsm')).body;
  await t.call('PUT', '/api/interfaces/gsm', { body: { name: 'gsm', settings: { ...row.settings, pin: '8642' }, transforms: row.transforms, retry: row.retry } });
  // What an older release let through: any field, stored as given.
  t.bridge.services.db.prepare("UPDATE interfaces SET settings = json_set(settings, '$.sim_pin', '2468') WHERE id = ?").run(id);
  const viewer = (await t.call('POST', '/api/auth/keys', { body: { label: 'viewer', role: 'viewer' } })).body.key;
  const admin = (await t.call('POST', '/api/auth/keys', { body: { label: 'admin', role: 'admin' } })).body.key;
  for (const key of [viewer, admin]) {
    const one = await t.call('GET', '/api/interfaces/gsm', { key });
    assert.is(one.status, 200, one.text);
    assert.is(one.body.settings.pin, '<redacted>');
    assert.is(one.body.settings.sim_pin, '<redacted>');
    const exported = await t.call('GET', '/api/config/export', { key });
    assert.is(exported.status, 200, exported.text);
    assert.not.match(exported.text, /8642|2468/);
    const gsm = JSON.parse(exported.text).interfaces.find((i: { name: string }) => i.name === 'gsm');
    assert.is(gsm.settings.pin, '<redacted>');
    assert.is(gsm.settings.sim_pin, '<redacted>');
    assert.is((await t.call('GET', '/api/config/export?secrets=include', { key })).status, 403, 'only an owner may ask for secrets');
    const list = await t.call('GET', '/api/interfaces', { key });
    assert.not.match(list.text, /8642|2468/);
  }
  // The owner who asks for secrets gets the stored values (to move them to another bridge).
  const full = JSON.parse((await t.call('GET', '/api/config/export?secrets=include')).text).interfaces.find((i: { name: string }) => i.name === 'gsm');
  assert.is(full.settings.pin, '8642');
  assert.is(full.settings.sim_pin, '2468');
  // A write must drop the unknown field: the schema refuses it, the marker included.
  const kept = (await t.call('GET', '/api/interfaces/gsm')).body;
  const put = await t.call('PUT', '/api/interfaces/gsm', { body: { name: 'gsm', settings: kept.settings, transforms: kept.transforms, retry: kept.retry } });
  assertProblem(put, 400);
  assert.match(JSON.stringify(put.body.errors), /sim_pin/);
  const { sim_pin: _dropped, ...clean } = kept.settings;
  assert.is((await t.call('PUT', '/api/interfaces/gsm', { body: { name: 'gsm', settings: clean, transforms: kept.transforms, retry: kept.retry } })).status, 200);
  assert.is(stored(id), '8642', 'the marker kept the PIN');
  assert.is(t.bridge.services.interfaces.get(id).settings.sim_pin, undefined, 'the unknown field is gone');
});

test('log lines never carry a field named like a SIM code, whoever logs it', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'json', level: 'debug', write: (l) => lines.push(l) });
  log.info('x', { pin: '4711', sim_pin: '1357', puk: '12345678', modem_pin: '2468', pin_left: 3 });
  const line = JSON.parse(lines[0]);
  assert.equal([line.pin, line.sim_pin, line.puk, line.modem_pin], ['[redacted]', '[redacted]', '[redacted]', '[redacted]']);
  assert.is(line.pin_left, 3, 'only names that end in pin or puk');
});

test('a bridge that brings up a modem with a PIN never logs it (debug level, captured)', async () => {
  const PIN = '5791';
  const network = new SmsNetwork();
  const modem = new SmsModem({ name: 'secrets-test', network, number: '+4916000005791', pin: PIN });
  const tcp = await serveSmsTcp(modem, { port: 0 });
  try {
    await createSmsInterface(t, 'gsm-online', tcp.device, { pin: PIN });
    await waitOnline(t, 'gsm-online');
    assert.is(modem.sim.state, 'ready', 'the SIM took the PIN from the bridge');
    assert.ok(t.logs.some((l) => /"event":"sms.phase"/.test(l) && /gsm-online/.test(l)), 'the bring-up was logged');
    const mentions = (l: string, pin: string) => new RegExp(`(^|[^0-9])${pin}([^0-9]|$)`).test(l);
    const leaks = t.logs.filter((l) => ['4711', '1234', '8642', '2468', '1357', PIN].some((pin) => mentions(l, pin)));
    assert.equal(leaks, [], 'no log line of this bridge carries any PIN written in this file');
    assert.ok((await t.call('DELETE', '/api/interfaces/gsm-online')).status < 300);
  } finally {
    await tcp.close();
    modem.close();
  }
});

test.run();
