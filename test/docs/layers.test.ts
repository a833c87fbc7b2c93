import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// The layers of docs/architecture.md are a test: every import in src/ is read, and each must be
// one its folder's row of the layer table allows; the message engine (src/bridge/engine/)
// imports no other folder of the bridge; the drivers (src/bearers/) never import the programs.
// The checks are pure functions of (importing file, imported file), so a wrong import is named
// with both paths and the rule it breaks.

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import of a file (static, type-only, re-exports and import()), as src-relative paths. */
export function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(?:import|export)\b[^'"`;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|^import\s+['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    const spec = m[1] ?? m[2] ?? m[3];
    const target = relative(SRC, resolve(dirname(file), spec));
    // package.json (the version) is data, not a layer.
    if (!target.startsWith('..')) out.push(target);
  }
  return out;
}

interface Row {
  folder: string;
  allows: (target: string) => boolean;
  says: string;
}

/** The table "| Folder | Holds | May import |" of docs/architecture.md, read as rules. */
export function layerRules(markdown: string): Row[] {
  const rows = [...markdown.matchAll(/^\| `src\/([a-z-]+)\/` \|[^|]*\| ([^|]+) \|$/gm)];
  const folders = rows.map((r) => r[1]);
  return rows.map((r, i) => {
    const says = r[2].trim();
    const above = folders.slice(0, i).map((f) => `${f}/`);
    const named = [...says.matchAll(/`([a-z-]+\/[a-z-]*\.?[a-z]*)`/g)].map((n) => n[1]);
    let allowed: string[];
    if (says === 'nothing of ours') allowed = [];
    else if (says.startsWith('everything above but')) allowed = above.filter((f) => !named.includes(f));
    else if (says === 'everything above') allowed = above;
    else allowed = named;
    const folder = r[1];
    return {
      folder,
      says,
      allows: (target) => target.startsWith(`${folder}/`) || allowed.some((a) => (a.endsWith('/') ? target.startsWith(a) : target === a)),
    };
  });
}

/** The folder of src/bridge a path belongs to ('engine', 'rules', ...), or null outside it. */
const bridgeFolder = (path: string) => (path.startsWith('bridge/') && path.split('/').length > 2 ? path.split('/')[1] : null);

export function engineBreaks(from: string, to: string): string | null {
  if (bridgeFolder(from) !== 'engine') return null;
  const folder = bridgeFolder(to);
  return folder !== null && folder !== 'engine' ? `the engine imports the resource folder bridge/${folder}/` : null;
}

export function bearerBreaks(from: string, to: string): string | null {
  return from.startsWith('bearers/') && (to.startsWith('bridge/') || to.startsWith('hub/')) ? 'a driver imports a program' : null;
}


/** Kinds: every folder of src/bearers/ but the shared one. */
const KINDS = readdirSync(join(SRC, 'bearers')).filter((n) => n !== 'shared' && statSync(join(SRC, 'bearers', n)).isDirectory());

/** Where a file outside a kind's folder names the kind: a string literal of its name, or an
 *  import from its folder. The registry (bearers/drivers.ts) is where kinds are named. */
export function kindMentions(from: string, text: string, imports: string[], kinds: readonly string[]): string[] {
  if (from === 'bearers/drivers.ts') return [];
  return kinds.flatMap((kind) => {
    if (from.startsWith(`bearers/${kind}/`)) return [];
    const named = new RegExp(`['"]${kind}['"]`).test(text);
    const imported = imports.some((to) => to.startsWith(`bearers/${kind}/`));
    return named || imported ? [`${from}: ${kind}`] : [];
  });
}

/** What still names a kind outside its folder, each with why. A new mention fails the test; so
 *  does an entry here that no longer holds (take it out). */
const KIND_MENTIONS_LEFT: Record<string, string> = {
  // Meshtastic firmware's own TAK module is one of the module configs the board holds.
  'bearers/meshtastic/simulator/state.ts: tak': 'a Meshtastic module config name',
  // "sim://" is a port scheme, served by whichever kind's simulator; not the sim kind.
  'bearers/shared/links/open-link.ts: sim': 'the sim:// port scheme',
  'bearers/shared/links/port-value.ts: sim': 'the sim:// port scheme',
  // Migrations are history: append-only, checksummed.
  'bridge/migrations.ts: meshtastic': 'migration history',
};

const rules = layerRules(readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8'));
const files = sources(SRC).map((file) => ({ from: relative(SRC, file), text: readFileSync(file, 'utf8'), imports: importsOf(file, readFileSync(file, 'utf8')) }));
const edges = files.flatMap(({ from, imports }) => imports.map((to) => ({ from, to })));

test('the layer table of docs/architecture.md is read (one row per top-level folder of src/)', () => {
  const top = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory()).sort();
  assert.equal(rules.map((r) => r.folder).sort(), top);
  assert.ok(edges.length > 500, `${edges.length} imports read`);
});

test('every import is one its folder\'s row of the layer table allows', () => {
  const broken = edges.flatMap(({ from, to }) => {
    const row = rules.find((r) => from.startsWith(`${r.folder}/`));
    return row && !row.allows(to) ? [`${from} -> ${to} (src/${row.folder}/ may import: ${row.says})`] : [];
  });
  assert.equal(broken, []);
});

test('the engine imports no resource folder; the drivers import neither program', () => {
  const broken = edges.flatMap(({ from, to }) => [engineBreaks(from, to), bearerBreaks(from, to)].filter(Boolean).map((why) => `${from} -> ${to}: ${why}`));
  assert.equal(broken, []);
});

test('no kind is named outside its folder and the registry, but for the listed remains', () => {
  const found = files.flatMap(({ from, text, imports }) => kindMentions(from, text, imports, KINDS)).sort();
  assert.equal(found, Object.keys(KIND_MENTIONS_LEFT).sort());
});

test('the checks fail on a wrong import', () => {
  assert.equal(kindMentions('bridge/preview/estimate.ts', "if (kind === 'sms') return 1;", [], ['sms', 'iridium']), ['bridge/preview/estimate.ts: sms']);
  assert.equal(kindMentions('bridge/nodes/routes.ts', '', ['bearers/meshtastic/index.ts'], ['meshtastic']), ['bridge/nodes/routes.ts: meshtastic']);
  assert.equal(kindMentions('bearers/sms/driver.ts', "'sms'", [], ['sms']), []);
  // What a wrong import would look like, through the same functions the tests above use.
  assert.ok(engineBreaks('bridge/engine/pipeline.ts', 'bridge/rules/service.ts'));
  assert.is(engineBreaks('bridge/engine/pipeline.ts', 'bridge/engine/decisions.ts'), null);
  assert.is(engineBreaks('bridge/rules/service.ts', 'bridge/engine/deciders.ts'), null);
  assert.ok(bearerBreaks('bearers/sms/driver.ts', 'bridge/engine/core.ts'));
  const lib = rules.find((r) => r.folder === 'lib')!;
  assert.not.ok(lib.allows('auth/secrets.ts'), 'lib/ may import nothing of ours');
  const hub = rules.find((r) => r.folder === 'hub')!;
  assert.not.ok(hub.allows('bridge/app.ts'));
  assert.ok(hub.allows('db/sqlite.ts'));
  assert.equal(importsOf(join(SRC, 'bridge', 'engine', 'x.ts'), "import type { A } from '../rules/service.ts';\nexport { B } from './b.ts';\nconst m = await import('../../db/sqlite.ts');"), ['bridge/rules/service.ts', 'bridge/engine/b.ts', 'db/sqlite.ts']);
});

test.run();
