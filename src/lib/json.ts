// JSON columns: values are stored as JSON text and parsed on the way out. Kept in one place
// so every store reads and writes them the same way.

export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function fromJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  return JSON.parse(text) as T;
}

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep equality of JSON values; object key order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
  const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
  return keysA.length === keysB.length && keysA.every((k) => b[k] !== undefined && jsonEqual(a[k], b[k]));
}

/**
 * How deeply a JSON value nests arrays and objects (a scalar is 0, `[]` and `{}` are 1),
 * counted without recursion, so no value can overflow the call stack here. Counting stops
 * once `stopAbove` is passed (the answer is then stopAbove + 1): a caller asking "deeper
 * than N?" walks no further than it needs to.
 */
export function jsonDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}
