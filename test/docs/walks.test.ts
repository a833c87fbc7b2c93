import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitUntil } from '../helpers/api.ts';
import { startTestBridge } from '../helpers/bridge.ts';
import { extractBlocks, runCurl } from '../helpers/curl-examples.ts';

// Each bearer page starts with "Try it without hardware": a simulated device in the bridge's
// process, an interface, a rule, and a message out through one simulated device that another
// hears and hands back to the bridge. The curl examples test runs every line; this one runs
// each walk on a fresh bridge and checks what the walk promises: the message went out
// (delivered) and came back in, as an operator following the page would see.

const root = join(import.meta.dirname, '..', '..');
const PAGES = ['docs/meshtastic.md', 'docs/sms.md', 'docs/meshcore.md', 'docs/iridium.md', 'docs/rnode.md', 'docs/aprs.md'];
const HEADING = '## Try it without hardware';
const TEXT = 'hello from the bridge';

for (const page of PAGES) {
  test(`${page}: the walk sends a message out and hears it come back in`, async () => {
    const markdown = readFileSync(join(root, page), 'utf8');
    const at = markdown.split('\n').findIndex((l) => l.trim() === HEADING);
    assert.ok(at >= 0, `${page} has a "${HEADING}" section`);
    const block = extractBlocks(page, markdown).find((b) => b.line > at + 1);
    assert.ok(block && block.skip === null && block.commands.length >= 4 && block.commands.length <= 7, `${page}: a walk of about five commands`);
    const t = await startTestBridge();
    const dir = mkdtempSync(join(tmpdir(), 'fb-walk-'));
    const auth = `Authorization: Bearer ${t.ownerKey}`;
    const ctx = { vars: { B: t.url, KEY: t.ownerKey, K: auth, H: auth, J: 'Content-Type: application/json' }, ownerKey: t.ownerKey };
    try {
      for (const c of block!.commands) {
        const r = await runCurl(c, ctx, t.url, dir);
        assert.ok(r.status >= 200 && r.status < 300, `${c.file}:${c.line}: ${r.method} ${r.url} answered ${r.status}: ${r.text.slice(0, 300)}`);
      }
      const sent = (await t.call('GET', '/api/messages?direction=outbound&limit=10')).body.items.find((m: any) => m.text === TEXT);
      assert.ok(sent, 'the walk sent the message');
      await waitUntil('it went out', async () => {
        const d = (await t.call('GET', `/api/deliveries?message=${sent.id}`)).body.items;
        return d.length > 0 && d.every((x: any) => x.state === 'delivered');
      }, 60_000);
      await waitUntil('it came back in', async () => (await t.call('GET', '/api/messages?direction=inbound&limit=10')).body.items.some((m: any) => (m.text ?? '').includes(TEXT)), 60_000);
    } finally {
      await t.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
