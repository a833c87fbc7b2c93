import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge } from '../helpers/bridge.ts';
import { API_HELPER, type DocBlock, extractBlocks, runCurl, splitWords } from '../helpers/curl-examples.ts';

// Every curl example in README.md and docs/*.md runs against a fresh in-process bridge with
// the owner key and must answer the status it shows (docs/dependencies.md, "Examples in the
// documentation are tested"). One bridge per document, its blocks in order, so a document's
// examples may build on each other.

const root = join(import.meta.dirname, '..', '..');
const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const blocksOf = new Map<string, DocBlock[]>(files.map((f) => [f, extractBlocks(f, readFileSync(join(root, f), 'utf8'))]));

test('the runner splits words like sh: quotes, continuations, variables, comments with a status', () => {
  const ctx = { vars: { B: 'http://b', J: 'Content-Type: application/json' }, ownerKey: 'fbb_k' };
  const text = `curl -s -H "$J" \\\n  -d '{"a":\n 1}' "$B/x?y=1" -H "Authorization: Bearer $(sudo cat /var/lib/x/owner.key)"   # 404 not there\nnext`;
  const r = splitWords(text, 0, ctx, 'here');
  assert.equal(r.words, ['curl', '-s', '-H', 'Content-Type: application/json', '-d', '{"a":\n 1}', 'http://b/x?y=1', '-H', 'Authorization: Bearer fbb_k']);
  assert.is(r.comment, '404 not there');
  assert.is(text.slice(r.end), '\nnext');
  assert.throws(() => splitWords('curl $NOPE', 0, ctx, 'here'), /unknown variable \$NOPE/);
  assert.throws(() => splitWords('curl x | jq', 0, ctx, 'here'), /not supported/);
  const [block] = extractBlocks('t.md', 'x\n<!-- curl-test: skip (needs a radio) -->\n```sh\ncurl a   # 409 busy\napi b \\\n  c\nB=1\n```\n');
  assert.is(block.skip, 'needs a radio');
  assert.equal(block.commands.map((c) => [c.line, c.expect]), [[4, 409], [5, null]]);
  assert.throws(() => extractBlocks('t.md', '<!-- curl-test: skip () -->\n```sh\ncurl a\n```'), /with a reason/);
  assert.throws(() => extractBlocks('t.md', '<!-- curl-test: skip (x) -->\ntext\n```sh\ncurl a\n```'), /right before a fenced block/);
});

test('docs/shell.md defines the api helper the runner assumes, and every page that uses it links there', () => {
  assert.ok(readFileSync(join(root, 'docs/shell.md'), 'utf8').includes(API_HELPER), API_HELPER);
  for (const file of files.filter((f) => f !== 'docs/shell.md')) {
    const text = readFileSync(join(root, file), 'utf8');
    if (blocksOf.get(file)!.some((b) => b.commands.some((c) => /^\s*api\b/.test(c.source) || c.source.includes('$B'))) && !/\(shell\.md\)|\(docs\/shell\.md\)/.test(text)) {
      assert.unreachable(`${file} uses the api helper or $B but does not link to shell.md`);
    }
  }
});

test('skips are few and each says why', () => {
  const skipped = [...blocksOf.values()].flat().filter((b) => b.skip !== null && b.commands.length > 0);
  for (const b of skipped) assert.ok(b.skip!.length >= 10, `${b.file}:${b.line}: say why the block is skipped`);
  assert.ok(skipped.length <= 6, `${skipped.length} skipped blocks: ${skipped.map((b) => `${b.file}:${b.line}`).join(', ')}`);
  const run = [...blocksOf.values()].flat().filter((b) => b.skip === null).flatMap((b) => b.commands);
  assert.ok(run.length >= 40, `only ${run.length} examples run`);
});

for (const file of files) {
  const commands = blocksOf.get(file)!.filter((b) => b.skip === null).flatMap((b) => b.commands);
  if (commands.length === 0) continue;
  test(`${file}: ${commands.length} curl examples answer the status they show`, async () => {
    const t = await startTestBridge();
    const dir = mkdtempSync(join(tmpdir(), 'fb-doc-'));
    const auth = `Authorization: Bearer ${t.ownerKey}`;
    const ctx = { vars: { B: t.url, KEY: t.ownerKey, K: auth, H: auth, J: 'Content-Type: application/json' }, ownerKey: t.ownerKey };
    const failures: string[] = [];
    try {
      for (const c of commands) {
        try {
          const r = await runCurl(c, ctx, t.url, dir);
          const ok = c.expect === null ? r.status >= 200 && r.status < 300 : r.status === c.expect;
          if (!ok) failures.push(`${c.file}:${c.line}: ${r.method} ${r.url} answered ${r.status}, expected ${c.expect ?? '2xx'}: ${r.text.slice(0, 400)}`);
        } catch (e) {
          failures.push((e as Error).message);
        }
      }
    } finally {
      await t.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.ok(failures.length === 0, `\n${failures.join('\n')}`);
  });
}

test.run();
