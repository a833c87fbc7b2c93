import { test } from 'uvu';
import { registerStoreConformance } from './store-conformance.ts';
import { postgresHarness } from './store-harness.ts';

// The same suite against the real PostgreSQL at TEST_PG_URL, one new database per test.
registerStoreConformance(test, postgresHarness());

test.run();
