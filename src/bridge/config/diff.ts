import { jsonEqual } from '../../lib/json.ts';
// What an import would change (docs/api.md 4.4 POST /api/config/diff), as a pure function over two
// JSON documents: no database, no I/O. Decisions (docs/config.md, "Diff"):
// - Paths: object keys joined by "." (keys that are not plain identifiers as ["key"]); items of
//   an array of named objects as [name=sat-alerts] (names with characters outside
//   A-Z a-z 0-9 _ . : @ - are JSON-quoted: [name="my radio"]); other arrays by index [3].
// - An array is "named" when every item on both sides is an object with a string `name` and
//   names are unique on each side (interfaces, access rules, groups, contacts). Its items are
//   matched by name, so a rename is a remove plus an add.
// - Order of a named array: items appended at the end are only adds; any other move (a rule
//   moved up, an item inserted in the middle) is also reported as one change at "<path>.order"
//   with the full name lists, because for access rules order is evaluation priority.
// - Output order is stable: the before document's order, then additions in the after
//   document's order, then the order entry. A key order difference alone is no change.
// - `from` is null for an add and `to` is null for a remove; `exported_at` at the top is ignored.

export type ChangeOp = 'add' | 'remove' | 'change';

export interface ConfigChange {
  path: string;
  op: ChangeOp;
  from: unknown;
  to: unknown;
}

const IGNORED_TOP_LEVEL = new Set(['exported_at']);

export function diffConfig(before: unknown, after: unknown): ConfigChange[] {
  const out: ConfigChange[] = [];
  if (isObject(before) && isObject(after)) diffObjects('', before, after, out, IGNORED_TOP_LEVEL);
  else walk('', before, after, out);
  return out;
}

function walk(path: string, a: unknown, b: unknown, out: ConfigChange[]): void {
  if (jsonEqual(a, b)) return;
  if (isObject(a) && isObject(b)) diffObjects(path, a, b, out);
  else if (Array.isArray(a) && Array.isArray(b)) {
    if (isNamedArray(a) && isNamedArray(b) && (a.length > 0 || b.length > 0)) diffNamed(path, a, b, out);
    else diffIndexed(path, a, b, out);
  } else out.push({ path, op: 'change', from: a ?? null, to: b ?? null });
}

function diffObjects(path: string, a: Obj, b: Obj, out: ConfigChange[], ignored: Set<string> = new Set()): void {
  for (const key of Object.keys(a)) {
    if (ignored.has(key) || a[key] === undefined) continue;
    const child = keyPath(path, key);
    if (b[key] === undefined) out.push({ path: child, op: 'remove', from: a[key], to: null });
    else walk(child, a[key], b[key], out);
  }
  for (const key of Object.keys(b)) {
    if (ignored.has(key) || b[key] === undefined || a[key] !== undefined) continue;
    out.push({ path: keyPath(path, key), op: 'add', from: null, to: b[key] });
  }
}

function diffNamed(path: string, a: Named[], b: Named[], out: ConfigChange[]): void {
  const afterByName = new Map(b.map((item) => [item.name, item]));
  const beforeNames = new Set(a.map((item) => item.name));
  for (const item of a) {
    const match = afterByName.get(item.name);
    if (match) walk(namePath(path, item.name), item, match, out);
    else out.push({ path: namePath(path, item.name), op: 'remove', from: item, to: null });
  }
  for (const item of b) {
    if (!beforeNames.has(item.name)) out.push({ path: namePath(path, item.name), op: 'add', from: null, to: item });
  }
  const from = a.map((item) => item.name);
  const to = b.map((item) => item.name);
  const expected = [...from.filter((n) => afterByName.has(n)), ...to.filter((n) => !beforeNames.has(n))];
  if (!jsonEqual(expected, to)) out.push({ path: `${path}.order`, op: 'change', from, to });
}

function diffIndexed(path: string, a: unknown[], b: unknown[], out: ConfigChange[]): void {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) walk(`${path}[${i}]`, a[i], b[i], out);
  for (let i = common; i < a.length; i++) out.push({ path: `${path}[${i}]`, op: 'remove', from: a[i] ?? null, to: null });
  for (let i = common; i < b.length; i++) out.push({ path: `${path}[${i}]`, op: 'add', from: null, to: b[i] ?? null });
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const BARE_NAME = /^[A-Za-z0-9_.:@-]+$/;

function keyPath(parent: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

function namePath(parent: string, name: string): string {
  return `${parent}[name=${BARE_NAME.test(name) ? name : JSON.stringify(name)}]`;
}

type Obj = Record<string, unknown>;
type Named = Obj & { name: string };

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNamedArray(items: unknown[]): items is Named[] {
  const names = new Set<string>();
  for (const item of items) {
    if (!isObject(item) || typeof item.name !== 'string' || names.has(item.name)) return false;
    names.add(item.name);
  }
  return true;
}
