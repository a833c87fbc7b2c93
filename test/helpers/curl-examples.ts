import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The curl examples of README.md and docs/*.md, read and run the way docs/dependencies.md
// ("Examples in the documentation are tested") says: fenced ```sh blocks, lines that start
// with `curl` or `api`, 2xx expected unless a trailing comment starts with a status, and a
// `<!-- curl-test: skip (reason) -->` line before a block that cannot run on a bare bridge.
// The shell is not run: each command is split into words as sh would (quotes, `\` line
// continuations, $VAR, a few $(...) forms) and its curl options become one fetch().

export interface DocCommand {
  file: string;
  line: number;
  /** The command as written (continuation lines included). */
  source: string;
  words: string[];
  /** The status written in its trailing comment (`# 404 ...`); null: any 2xx. */
  expect: number | null;
}

export interface DocBlock {
  file: string;
  line: number;
  skip: string | null;
  commands: DocCommand[];
}

const SKIP_MARKER = /^<!--\s*curl-test:\s*skip\s*\((.*)\)\s*-->$/;
const ANY_MARKER = /^<!--\s*curl-test/;
const COMMAND_START = /^\s*(curl|api)\s/;

/** The shell variables the examples may use, and what `$(cat .../owner.key)` reads. */
export interface ShellContext {
  vars: Record<string, string>;
  ownerKey: string;
}

/** Every ```sh block of one Markdown file with the commands in it. Words are split later,
 *  when the bridge (and so $B and the key) exists; here only the extent of each command. */
export function extractBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  let pendingSkip: { reason: string; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (ANY_MARKER.test(trimmed)) {
      const m = SKIP_MARKER.exec(trimmed);
      if (!m || !m[1].trim()) throw new Error(`${file}:${i + 1}: a curl-test marker must read <!-- curl-test: skip (reason) --> with a reason`);
      pendingSkip = { reason: m[1].trim(), line: i + 1 };
      continue;
    }
    const fence = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!fence) {
      if (trimmed !== '' && pendingSkip) throw new Error(`${file}:${pendingSkip.line}: a curl-test skip marker must come right before a fenced block`);
      continue;
    }
    // A fenced block: find its end (same indentation, bare fence).
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    if (fence[2] === 'sh') {
      const body = lines.slice(i + 1, end).map((l) => l.slice(Math.min(fence[1].length, l.length - l.trimStart().length)));
      blocks.push({ file, line: i + 1, skip: pendingSkip?.reason ?? null, commands: commandsOf(file, i + 2, body.join('\n')) });
    } else if (pendingSkip) {
      throw new Error(`${file}:${pendingSkip.line}: a curl-test skip marker must come before a \`\`\`sh block`);
    }
    pendingSkip = null;
    i = end;
  }
  if (pendingSkip) throw new Error(`${file}:${pendingSkip.line}: a curl-test skip marker with no block after it`);
  return blocks;
}

function commandsOf(file: string, firstLine: number, text: string): DocCommand[] {
  const out: DocCommand[] = [];
  let pos = 0;
  let line = firstLine;
  while (pos < text.length) {
    const eol = text.indexOf('\n', pos) === -1 ? text.length : text.indexOf('\n', pos);
    if (COMMAND_START.test(text.slice(pos, eol))) {
      // Split once without expansions just to find where the command ends.
      const { end, comment } = splitWords(text, pos, null, `${file}:${line}`);
      const source = text.slice(pos, end);
      const status = comment === null ? null : /^(\d{3})\b/.exec(comment)?.[1];
      out.push({ file, line, source, words: [], expect: status ? Number(status) : null });
      line += source.split('\n').length;
      pos = end + 1;
    } else {
      line++;
      pos = eol + 1;
    }
  }
  return out;
}

/**
 * Splits one command starting at `start` into words like sh: whitespace separates words,
 * '...' is literal, "..." expands $VAR and $(...), a backslash escapes, backslash-newline
 * continues the line, an unquoted # starts a comment. ctx null: nothing is expanded (to find
 * the end). Pipes, redirections and ; are refused: an example is one curl call.
 */
export function splitWords(text: string, start: number, ctx: ShellContext | null, where: string): { words: string[]; comment: string | null; end: number } {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = start;
  const expand = (): string => {
    // at text[i] === '$'
    if (text[i + 1] === '(') {
      const close = text.indexOf(')', i + 2);
      if (close === -1) throw new Error(`${where}: unterminated $(...)`);
      const inner = text.slice(i + 2, close).trim();
      i = close + 1;
      if (!/^(sudo )?cat \S*owner\.key$/.test(inner)) throw new Error(`${where}: unsupported command substitution $(${inner}); only $(cat .../owner.key)`);
      return ctx ? ctx.ownerKey : '';
    }
    const m = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(text.slice(i));
    if (!m) {
      i++;
      return '$';
    }
    i += m[0].length;
    const name = m[1] ?? m[2];
    if (!ctx) return '';
    if (!(name in ctx.vars)) throw new Error(`${where}: unknown variable $${name} (known: ${Object.keys(ctx.vars).join(', ')})`);
    return ctx.vars[name];
  };
  for (;;) {
    const c = text[i];
    if (c === undefined || c === '\n') {
      if (inWord) words.push(word);
      return { words, comment: null, end: i };
    }
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === ' ' || c === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    if (c === '#' && !inWord) {
      const eol = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
      return { words, comment: text.slice(i + 1, eol).trim(), end: eol };
    }
    if (';|&<>`'.includes(c)) throw new Error(`${where}: "${c}" is not supported in a tested example (one curl call per command)`);
    inWord = true;
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) throw new Error(`${where}: unterminated '...'`);
      word += text.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      i++;
      while (text[i] !== '"') {
        if (text[i] === undefined) throw new Error(`${where}: unterminated "..."`);
        if (text[i] === '\\' && '$`"\\\n'.includes(text[i + 1])) {
          if (text[i + 1] !== '\n') word += text[i + 1];
          i += 2;
        } else if (text[i] === '$') word += expand();
        else word += text[i++];
      }
      i++;
    } else if (c === '$') {
      word += expand();
    } else if (c === '\\') {
      word += text[i + 1] ?? '';
      i += 2;
    } else {
      word += c;
      i++;
    }
  }
}

/** The helper docs/routing.md defines; `api ARGS` runs `curl` with these first. */
export const API_HELPER = `api() { curl -sS -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$@"; }`;
const API_PREFIX = (ctx: ShellContext) => ['-sS', '-H', `Authorization: Bearer ${ctx.vars.KEY}`, '-H', 'Content-Type: application/json'];

export interface CurlResult {
  method: string;
  url: string;
  status: number;
  text: string;
}

/**
 * Runs one command's curl options against `base` (the bridge under test): -X, -H, -d and
 * --data* (with @file), -o FILE, -s/-S. A URL on localhost:8080 or 127.0.0.1:8080, or without
 * a scheme, goes to `base`; any other host is an error (the block needs a skip marker).
 * Files (-o, @file) live in `dir`.
 */
export async function runCurl(command: DocCommand, ctx: ShellContext, base: string, dir: string): Promise<CurlResult> {
  const where = `${command.file}:${command.line}`;
  const { words } = splitWords(command.source, 0, ctx, where);
  const args = words[0] === 'api' ? [...API_PREFIX(ctx), ...words.slice(1)] : words.slice(1);
  let method: string | undefined;
  const headers = new Headers();
  const data: string[] = [];
  let output: string | undefined;
  let url: string | undefined;
  const value = (k: number) => {
    if (args[k + 1] === undefined) throw new Error(`${where}: ${args[k]} needs a value`);
    return args[k + 1];
  };
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (['-s', '-S', '-sS', '-Ss', '--silent', '--show-error'].includes(a)) continue;
    if (a === '-X' || a === '--request') method = value(k++);
    else if (a === '-H' || a === '--header') {
      const h = value(k++);
      const colon = h.indexOf(':');
      if (colon < 1) throw new Error(`${where}: bad header ${JSON.stringify(h)}`);
      headers.set(h.slice(0, colon).trim(), h.slice(colon + 1).trim());
    } else if (['-d', '--data', '--data-binary', '--data-raw'].includes(a)) {
      const v = value(k++);
      if (v.startsWith('@') && a !== '--data-raw') {
        const content = readFileSync(join(dir, v.slice(1)), 'utf8');
        // curl -d @file drops carriage returns and newlines; --data-binary sends the bytes.
        data.push(a === '--data-binary' ? content : content.replace(/[\r\n]/g, ''));
      } else data.push(v);
    } else if (a === '-o' || a === '--output') output = value(k++);
    else if (a.startsWith('-')) throw new Error(`${where}: curl option ${a} is not supported by the example runner (docs/dependencies.md)`);
    else if (url !== undefined) throw new Error(`${where}: more than one URL (${url}, ${a})`);
    else url = a;
  }
  if (url === undefined) throw new Error(`${where}: no URL`);
  const target = new URL(/^[a-z]+:\/\//.test(url) ? url : `http://${url}`);
  const origin = new URL(base);
  if (target.host === 'localhost:8080' || target.host === '127.0.0.1:8080') target.host = origin.host;
  if (target.origin !== origin.origin) throw new Error(`${where}: calls ${target.origin}, not the bridge: mark the block <!-- curl-test: skip (reason) -->`);
  const body = data.length ? data.join('&') : undefined;
  if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded');
  const m = method ?? (body !== undefined ? 'POST' : 'GET');
  const res = await fetch(target, { method: m, headers, body });
  const text = await res.text();
  if (output !== undefined) writeFileSync(join(dir, output), text);
  return { method: m, url: target.pathname + target.search, status: res.status, text };
}
