import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// scripts/install.sh into a temporary root, with a small fake file as the binary. The
// real-root branch (systemctl daemon-reload/enable) is not run here: it would change this
// machine; a fake systemctl first on PATH proves a --prefix install never calls it.

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const target = join(dir, 'root');
const fakeBin = join(dir, 'fake-fieldbridge');
writeFileSync(fakeBin, '#!/bin/sh\necho fake 1\n');
const systemctlLog = join(dir, 'systemctl.log');
mkdirSync(join(dir, 'bin'));
writeFileSync(join(dir, 'bin', 'systemctl'), `#!/bin/sh\necho "$*" >> ${systemctlLog}\n`);
chmodSync(join(dir, 'bin', 'systemctl'), 0o755);

function install(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync('bash', [join(root, 'scripts', 'install.sh'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, DESTDIR: '', ...env },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const at = (p: string) => join(target, p);
const mode = (p: string) => (statSync(at(p)).mode & 0o777).toString(8);
const files: Array<[string, string, string]> = [
  ['/usr/local/bin/fieldbridge', fakeBin, '755'],
  ['/etc/systemd/system/fieldbridge.service', 'systemd/fieldbridge.service', '644'],
  ['/etc/systemd/system/fieldbridge-hub.service', 'systemd/fieldbridge-hub.service', '644'],
  ['/etc/systemd/system/fieldbridge.service.d/ble.conf', 'systemd/fieldbridge.service.d/ble.conf', '644'],
  ['/etc/modules-load.d/fieldbridge.conf', 'systemd/modules-load.d/fieldbridge.conf', '644'],
  ['/etc/udev/rules.d/70-fieldbridge-modemmanager.rules', 'systemd/udev/70-fieldbridge-modemmanager.rules', '644'],
];

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('installs the binary, units, modules-load and udev files with their modes', () => {
  const r = install(['--prefix', target, '--binary', fakeBin]);
  assert.is(r.code, 0, r.out);
  for (const [dest, src, m] of files) {
    assert.ok(existsSync(at(dest)), `${dest} missing`);
    assert.is(mode(dest), m, `${dest} mode`);
    assert.is(readFileSync(at(dest), 'utf8'), readFileSync(src.startsWith('/') ? src : join(root, src), 'utf8'), `${dest} content`);
  }
  assert.not.ok(existsSync(systemctlLog), 'a --prefix install never calls systemctl');
  assert.match(r.out, 'systemd not touched');
});

test('running it again changes nothing', () => {
  const before = files.map(([dest]) => statSync(at(dest)).mtimeMs);
  const r = install(['--prefix', target, '--binary', fakeBin]);
  assert.is(r.code, 0, r.out);
  assert.equal(files.map(([dest]) => statSync(at(dest)).mtimeMs), before);
  assert.not.ok(existsSync(at('/usr/local/bin/fieldbridge.previous')), 'no rollback copy for an identical binary');
  assert.is(r.out.split('unchanged').length - 1, 5);
});

test('an edited BLE drop-in and a wrong mode survive / are repaired on reinstall', () => {
  writeFileSync(at('/etc/systemd/system/fieldbridge.service.d/ble.conf'), '[Service]\nSupplementaryGroups=bluetooth\n');
  chmodSync(at('/etc/systemd/system/fieldbridge.service'), 0o600);
  const r = install(['--prefix', target, '--binary', fakeBin]);
  assert.is(r.code, 0, r.out);
  assert.is(readFileSync(at('/etc/systemd/system/fieldbridge.service.d/ble.conf'), 'utf8'), '[Service]\nSupplementaryGroups=bluetooth\n');
  assert.is(mode('/etc/systemd/system/fieldbridge.service'), '644');
});

test('DESTDIR works like --prefix; a new binary replaces the old, which is kept for rollback', () => {
  const newer = join(dir, 'fake-2');
  writeFileSync(newer, '#!/bin/sh\necho fake 2\n');
  const r = install(['--binary', newer], { DESTDIR: target });
  assert.is(r.code, 0, r.out);
  assert.is(readFileSync(at('/usr/local/bin/fieldbridge'), 'utf8'), '#!/bin/sh\necho fake 2\n');
  assert.is(readFileSync(at('/usr/local/bin/fieldbridge.previous'), 'utf8'), '#!/bin/sh\necho fake 1\n');
  assert.is(mode('/usr/local/bin/fieldbridge'), '755');
});

test('installing fieldbridge.previous rolls back; the newer binary becomes the previous one', () => {
  const r = install(['--prefix', target, '--binary', at('/usr/local/bin/fieldbridge.previous')]);
  assert.is(r.code, 0, r.out);
  assert.is(readFileSync(at('/usr/local/bin/fieldbridge'), 'utf8'), '#!/bin/sh\necho fake 1\n');
  assert.is(readFileSync(at('/usr/local/bin/fieldbridge.previous'), 'utf8'), '#!/bin/sh\necho fake 2\n');
});

test('--uninstall removes what it installed and keeps the data; --purge removes the data', () => {
  mkdirSync(at('/var/lib/private/fieldbridge'), { recursive: true });
  writeFileSync(at('/var/lib/private/fieldbridge/bridge.db'), 'data');
  mkdirSync(at('/etc/default'), { recursive: true });
  writeFileSync(at('/etc/default/fieldbridge'), 'SERVICE_LISTEN=0.0.0.0:8080\n');
  let r = install(['--prefix', target, '--uninstall']);
  assert.is(r.code, 0, r.out);
  for (const [dest] of files) assert.not.ok(existsSync(at(dest)), `${dest} still there`);
  assert.not.ok(existsSync(at('/usr/local/bin/fieldbridge.previous')));
  assert.ok(existsSync(at('/var/lib/private/fieldbridge/bridge.db')), 'the database is kept');
  assert.ok(existsSync(at('/etc/default/fieldbridge')), 'settings are kept');
  r = install(['--prefix', target, '--uninstall']);
  assert.is(r.code, 0, 'uninstalling twice is fine');
  r = install(['--prefix', target, '--uninstall', '--purge']);
  assert.is(r.code, 0, r.out);
  assert.not.ok(existsSync(at('/var/lib/private/fieldbridge')));
  assert.not.ok(existsSync(at('/etc/default/fieldbridge')));
  assert.not.ok(existsSync(systemctlLog));
});

test('bad arguments: usage error (exit 2) or a message naming the problem (exit 1), nothing installed', () => {
  const empty = join(dir, 'empty-root');
  for (const [args, code, says] of [
    [['--prefix', empty, '--frobnicate'], 2, 'unknown option --frobnicate'],
    [['--prefix', empty, '--purge'], 2, '--purge goes with --uninstall'],
    [['--prefix'], 2, '--prefix needs a directory'],
    [['--prefix', empty, '--binary'], 2, '--binary needs a file'],
    [['--prefix', empty, '--binary', join(dir, 'nope')], 1, `--binary ${join(dir, 'nope')}: no such file`],
  ] as Array<[string[], number, string]>) {
    const r = install(args);
    assert.is(r.code, code, `${args.join(' ')}: ${r.out}`);
    assert.match(r.out, says);
  }
  assert.not.ok(existsSync(empty));
});

test.run();
