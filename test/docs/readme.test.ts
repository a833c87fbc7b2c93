import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// README.md says why `npm ci` prints EBADENGINE warnings on a machine whose system Node is
// older than 24, and names the packages that warn (issue 14). npm checks `engines` against the
// Node that runs npm itself; the packages named here are computed from package-lock.json, so
// the README follows when a dependency raises its requirement.

const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { name?: string; version?: string; engines?: { node?: string } }> };

/** Whether version (major.minor.patch) satisfies an npm engines range: ||, space-separated
 *  comparators (>=, >, <=, <, =, ^, ~) and x-ranges; enough for the ranges in the lock. */
function satisfies(version: string, range: string): boolean {
  const v = version.split('.').map(Number);
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
    return 0;
  };
  return range.split('||').some((alt) => {
    const parts = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return parts.every((c) => {
      const m = /^(>=|<=|>|<|=|\^|~)?v?([\dx*]+)(?:\.([\dx*]+))?(?:\.([\dx*]+))?/.exec(c);
      if (!m) throw new Error(`range ${JSON.stringify(range)}`);
      const op = m[1] ?? '';
      const nums = [m[2], m[3], m[4]];
      const wild = nums.findIndex((n) => n === undefined || n === 'x' || n === '*');
      const fixed = nums.slice(0, wild === -1 ? 3 : wild).map(Number);
      const base = [fixed[0] ?? 0, fixed[1] ?? 0, fixed[2] ?? 0];
      if (op === '>=') return cmp(v, base) >= 0;
      if (op === '>') return cmp(v, base) > 0;
      if (op === '<=') return cmp(v, base) <= 0;
      if (op === '<') return cmp(v, base) < 0;
      if (op === '^') return v[0] === base[0] && cmp(v, base) >= 0;
      if (op === '~') return v[0] === base[0] && v[1] === base[1] && cmp(v, base) >= 0;
      return fixed.every((n, i) => v[i] === n); // = or an x-range (*, 20, 20.x)
    });
  });
}

test('the range matcher reads the ranges of the lock file', () => {
  assert.ok(satisfies('20.20.0', '^18 || ^20 || >= 21'));
  assert.ok(satisfies('20.20.0', '6.* || 8.* || >= 10.*'));
  assert.ok(satisfies('20.20.0', '>=16 || 14 >=14.17'));
  assert.ok(satisfies('20.20.0', '*'));
  assert.not.ok(satisfies('20.20.0', '>= 22'));
  assert.not.ok(satisfies('20.20.0', '>=24'));
  assert.not.ok(satisfies('18.19.0', '>=20.18.1'));
});

test('README explains the EBADENGINE warnings of npm ci under an older system Node and names who gives them', () => {
  const section = readme.slice(readme.indexOf('EBADENGINE'));
  assert.ok(readme.includes('EBADENGINE'), 'README mentions EBADENGINE');
  assert.match(section.slice(0, 1500), /harmless/);
  // Node 20 is the oldest Node still maintained when this was written; the README lists what warns there.
  const warns = Object.entries(lock.packages)
    .filter(([, p]) => p.engines?.node && !satisfies('20.20.0', p.engines.node))
    .map(([path, p]) => (path === '' ? (p.name ?? 'fieldbridge') : path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)));
  assert.ok(warns.includes('fieldbridge'), warns.join(', '));
  for (const name of warns) assert.ok(section.slice(0, 1500).includes(`\`${name}\``), `README names ${name} among the packages that warn under Node 20`);
});

test.run();
