import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningBridge, startBridge } from '../../src/bridge/app.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/log.ts';
import { apiClient } from './api.ts';

// An in-process bridge on a temporary database and port 0, for HTTP tests. Every log line is
// kept in `logs` so tests can assert on what the operator would see.

export interface TestBridge {
  bridge: RunningBridge;
  url: string;
  dir: string;
  dbPath: string;
  ownerKey: string;
  logs: string[];
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  stop(): Promise<void>;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * `rateLimit`: keep routing.rate_limit (120 sends a minute, burst 20) as a new bridge has it;
 * by default tests lift it, since most send far more than a field operator would.
 */
export async function startTestBridge(options: { clock?: Clock; dir?: string; rateLimit?: boolean; retentionDays?: number; port?: number } = {}): Promise<TestBridge> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'fb-'));
  const dbPath = join(dir, 'bridge.db');
  const logs: string[] = [];
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => logs.push(line) });
  const bridge = await startBridge({ dbPath, host: '127.0.0.1', port: options.port ?? 0, log, clock: options.clock, checkResponses: true, retentionDays: options.retentionDays });
  const ownerKey = readFileSync(join(dir, 'owner.key'), 'utf8').trim();
  if (!options.rateLimit) bridge.services.config.write('routing', { rate_limit: { sends_per_minute: 0 } }, 'test');
  const call = apiClient(() => bridge.url, () => ownerKey);
  return {
    bridge,
    url: bridge.url,
    dir,
    dbPath,
    ownerKey,
    logs,
    call,
    stop: async () => {
      await bridge.close(2000);
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
