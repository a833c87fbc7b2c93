import type { ServerResponse } from 'node:http';
import yazl from 'yazl';
import type { HubStore } from '../store/store.ts';

// GET /api/tenant/export (docs/api.md 4.2): a ZIP with one JSON file per tenant table, the tables and
// their exportable columns read from the catalogue (src/hub/store/catalogue.ts), so secret
// columns never leave and a new table needs no code here. yazl streams the archive into the
// response and turns to ZIP64 by itself for large tenants (docs/dependencies.md). Each table is read
// whole, one at a time: the largest single table bounds the memory used.

export async function streamTenantExport(store: HubStore, tenantId: string, res: ServerResponse, now: Date): Promise<void> {
  const tables = await store.tenantTables();
  const zip = new yazl.ZipFile();
  const stamp = now.toISOString().slice(0, 10);
  res.writeHead(200, {
    'Content-Type': 'application/zip',
    'Content-Disposition': `attachment; filename="fieldbridge-hub-${tenantId.replace(/[^A-Za-z0-9_.-]/g, '_')}-${stamp}.zip"`,
  });
  zip.outputStream.pipe(res);
  const finished = new Promise<void>((resolve, reject) => {
    zip.outputStream.once('end', resolve);
    zip.outputStream.once('error', reject);
  });
  try {
    for (const table of tables) {
      const rows = await store.exportRows(table, tenantId);
      zip.addBuffer(Buffer.from(JSON.stringify(rows, null, 2) + '\n', 'utf8'), `${table.name}.json`, { mtime: now });
    }
  } catch (error) {
    // Headers are gone: the only honest answer left is a broken download.
    res.destroy(error as Error);
    throw error;
  }
  zip.end();
  await finished;
}
