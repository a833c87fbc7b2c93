import { test } from 'uvu';
import { registerStoreConformance } from './store-conformance.ts';
import { sqliteHarness } from './store-harness.ts';

registerStoreConformance(test, sqliteHarness());

test.run();
