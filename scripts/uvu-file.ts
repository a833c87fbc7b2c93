// Runs one uvu test file the way uvu's own CLI does (defer, import, exec), so that
// scripts/run-tests.ts can give each file its own process.
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
(globalThis as Record<string, unknown>).UVU_DEFER = 1;
(globalThis as Record<string, unknown>).UVU_INDEX = 0;
(globalThis as Record<string, unknown>).UVU_QUEUE = [[file]];
const uvu = await import('uvu');
await import(pathToFileURL(file).href);
await uvu.exec(false);
