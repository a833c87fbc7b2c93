import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadedModules } from '../../scripts/bench-binary.ts';

// A subcommand loads only what it needs (issue 22 item 3: memory and start-up on small boards).
// Each case runs the real command from the source tree with a module.registerHooks load hook
// (scripts/bench-binary.ts, loadedModules) and checks what was loaded: a behaviour, not a
// timing. The bundled executable follows the same structure: esbuild runs a module reached only
// through import() when that import() runs. docs/performance.md, "Memory and start-up".

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Paths relative to the repository for file: URLs, `node:x` as it is. */
const paths = (urls: string[]) => urls.map((u) => (u.startsWith('file:') ? relative(root, fileURLToPath(u)) : u));

const pkg = (name: string) => (p: string) => p.includes(`node_modules/${name}/`);
const under = (folder: string) => (p: string) => p.startsWith(folder);

/** What `filter` picked from the list, for a message that names it. */
function loaded(list: string[], filter: (p: string) => boolean): string[] {
  return list.filter(filter);
}

// The simulators' usage texts (usage.ts) and the lazy loaders (lazy.ts) are what a driver
// module holds of its simulator; the simulators themselves are code the bridge never runs
// unless an interface is bound to sim:// of that kind.
const simulatorCode = (p: string) => /^src\/bearers\/(shared\/simulators|[a-z]+\/simulator)\//.test(p) && !/\/(usage|lazy)\.ts$/.test(p);

test('fieldbridge version loads no bridge, hub, bearer or package', async () => {
  const list = paths(await loadedModules(['version']));
  assert.equal(loaded(list, (p) => p.startsWith('src/') && !['src/main.ts', 'src/lib/errors.ts', 'src/lib/version.ts'].includes(p)), [], 'only main.ts, errors.ts and version.ts of src/');
  assert.equal(loaded(list, under('node_modules/')), [], 'no package');
});

test('the bridge starts without simulators, hub, PostgreSQL, ZIP or serialport code', async () => {
  const list = paths(await loadedModules(['bridge']));
  assert.ok(list.includes('src/bridge/app.ts'), 'the bridge itself was loaded');
  assert.equal(loaded(list, simulatorCode), [], 'no simulator (sim:// and `fieldbridge sim` import them when used)');
  assert.equal(loaded(list, under('src/hub/')), [], 'nothing of the hub');
  assert.equal(loaded(list, pkg('postgres')), [], 'no PostgreSQL client');
  assert.equal(loaded(list, pkg('yazl')), [], 'no ZIP writer');
  assert.equal(loaded(list, (p) => pkg('serialport')(p) || p.includes('node_modules/@serialport/')), [], 'no serialport: loaded on the first serial open (shared/links/open-link.ts)');
  assert.equal(loaded(list, (p) => p === 'src/bearers/shared/links/serial-link.ts' || p === 'src/bearers/shared/links/ble-link.ts'), [], 'no serial or BLE link');
});

// mqtt.js loads with the uplink's first connection (bridge/uplink/connection.ts), the D-Bus client
// with the first ble:// link or port listing (shared/links/open-link.ts, shared/links/list-ports.ts).
test('the bridge starts without MQTT (no hub configured) or D-Bus (no ble:// device)', async () => {
  const list = paths(await loadedModules(['bridge']));
  assert.equal(loaded(list, pkg('mqtt')), [], 'mqtt.js loads when the uplink first connects');
  assert.equal(loaded(list, pkg('@homebridge/dbus-native')), [], 'the D-Bus client loads with the first ble:// link or port listing');
});

test('the hub starts without bearers, simulators or the bridge', async () => {
  const list = paths(await loadedModules(['hub']));
  assert.ok(list.includes('src/hub/app.ts'), 'the hub itself was loaded');
  assert.equal(loaded(list, under('src/bearers/')), [], 'no bearer, link or simulator');
  assert.equal(loaded(list, under('src/bridge/')), [], 'nothing of the bridge');
  assert.equal(loaded(list, (p) => pkg('serialport')(p) || p.includes('node_modules/@serialport/') || pkg('@homebridge/dbus-native')(p)), [], 'no serialport or D-Bus');
});

test('fieldbridge sim rnode --help reads the usage without loading any simulator', async () => {
  const list = paths(await loadedModules(['sim', 'rnode', '--help']));
  // bearers/shared/simulators/cli.ts is the command (the kinds and their usage from the driver modules), no simulator.
  assert.equal(loaded(list, (p) => simulatorCode(p) && p !== 'src/bearers/shared/simulators/cli.ts'), [], 'the usage text is in <kind>/simulator/usage.ts');
});

test.run();
