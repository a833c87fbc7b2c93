import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem } from '../../helpers/routing.ts';

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

test.run();
