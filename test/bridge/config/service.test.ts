import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REDACTION_MARKER } from '../../../src/bridge/config/sections.ts';
import { ConfigService } from '../../../src/bridge/config/service.ts';
import { ConfigStore } from '../../../src/bridge/config/store.ts';
import { transaction } from '../../../src/db/sqlite.ts';
import { AppError } from '../../../src/lib/errors.ts';
import { type Harness, startHarness } from './harness.ts';

// The parts of ConfigService that export/import will build on, on a real database file.

async function withBridge(fn: (h: Harness) => Promise<void> | void): Promise<void> {
  const h = await startHarness();
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const tableDump = (h: Harness) => JSON.stringify(h.db.prepare('SELECT * FROM config_sections ORDER BY section').all());

test('checkSections lists every error with its path and touches nothing', () =>
  withBridge((h) => {
    h.config.write('hub', { password: 'pw' }, 'x');
    const before = tableDump(h);
    const check = h.config.checkSections({ radio: { region: 'XX' }, owner: { long_name: 'x'.repeat(40) }, hub: { enabled: true, password: REDACTION_MARKER } }, 'file');
    assert.not.ok(check.ok);
    if (!check.ok) {
      assert.equal(check.errors.map((e) => e.path).sort(), ['file.hub.mqtt_url', 'file.owner.long_name', 'file.radio.region']);
    }
    assert.is(tableDump(h), before);
    assert.not.ok(h.config.checkSections([], 'file').ok);
  }));

test('checkSections restores a marker from the stored secret; a marker with nothing stored is an error', () =>
  withBridge((h) => {
    const noSecret = h.config.checkSections({ hub: { password: REDACTION_MARKER } }, 'file');
    assert.equal(noSecret.ok ? [] : noSecret.errors.map((e) => e.path), ['file.hub.password']);
    h.config.write('hub', { password: 'pw' }, 'x');
    const check = h.config.checkSections({ hub: { password: REDACTION_MARKER } }, 'file');
    assert.ok(check.ok);
    if (check.ok) assert.is(check.value.hub.password, 'pw');
  }));

test('replaceAll on its own commits and announces each changed section and module', () =>
  withBridge((h) => {
    const seen: string[] = [];
    h.config.on('change', (s) => seen.push(s));
    const check = h.config.checkSections({ radio: { region: 'ANZ' }, modules: { beacon: { enabled: true, text: 'hi' }, telemetry: {} } }, 'file');
    assert.ok(check.ok);
    if (!check.ok) return;
    const changes = h.config.replaceAll(check.value);
    assert.equal(changes.map(([s]) => s), ['radio', 'beacon']);
    assert.equal(seen, ['radio', 'beacon']);
    assert.is(h.reopen().section('radio').region, 'ANZ');
    assert.equal(h.config.replaceAll(check.value), [], 'the same values again change nothing');
  }));

test('inside the caller\'s transaction replaceAll announces nothing, and a rollback stores nothing', () =>
  withBridge((h) => {
    const seen: string[] = [];
    h.config.on('change', (s) => seen.push(s));
    const check = h.config.checkSections({ owner: { long_name: 'Ridge' } }, 'file');
    if (!check.ok) throw new Error('unexpected');
    const before = tableDump(h);
    assert.throws(() =>
      transaction(h.db, () => {
        h.config.replaceAll(check.value);
        throw new Error('a later part of the import failed');
      }),
    );
    assert.is(tableDump(h), before);
    assert.equal(seen, []);
    const changes = transaction(h.db, () => h.config.replaceAll(check.value));
    assert.equal(seen, []);
    h.config.announce(changes);
    assert.equal(seen, ['owner']);
  }));

test('a stored section that no longer validates is a 500 naming the section', () =>
  withBridge((h) => {
    // Written behind the service's back (a hand-edited file), then read by a bridge started on it.
    new ConfigStore(h.db).put('radio', JSON.stringify({ hop_limit: 12 }), 'now');
    const config = new ConfigService(new ConfigStore(h.db), h.clock);
    try {
      config.section('radio');
      assert.unreachable();
    } catch (error) {
      assert.instance(error, AppError);
      assert.is((error as AppError).code, 'ERR_CONFIG_STORED_INVALID');
      assert.is((error as AppError).status, 500);
      assert.match((error as AppError).message, 'radio.hop_limit');
    }
    assert.is(config.section('owner').short_name, 'FB', 'other sections still read');
  }));

test('the reported radio values are kept as a copy and can be cleared', () =>
  withBridge((h) => {
    const fresh = new ConfigService(new ConfigStore(h.db), h.clock);
    assert.is(fresh.reportedRadio(), null);
    const report = { region: 'US' as const };
    fresh.setReportedRadio(report);
    report.region = 'EU_868' as never;
    assert.equal(fresh.reportedRadio(), { region: 'US' });
    fresh.setReportedRadio(null);
    assert.is(fresh.reportedRadio(), null);
  }));

test.run();
