import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { StartupError } from '../../src/lib/errors.ts';
import { pickLogFormat } from '../../src/lib/log.ts';

// SERVICE_LOG_FORMAT / HUB_LOG_FORMAT (src/lib/log.ts pickLogFormat; issue 14): a format's
// name picks it, unset picks by where the output goes, anything else stops the start.

test('unset or empty: journald under systemd, pretty elsewhere; a format name picks that format', () => {
  assert.is(pickLogFormat({}, 'SERVICE_LOG_FORMAT'), 'pretty');
  assert.is(pickLogFormat({ SERVICE_LOG_FORMAT: '' }, 'SERVICE_LOG_FORMAT'), 'pretty');
  assert.is(pickLogFormat({ JOURNAL_STREAM: '8:1234' }, 'SERVICE_LOG_FORMAT'), 'journald');
  assert.is(pickLogFormat({ JOURNAL_STREAM: '8:1234', SERVICE_LOG_FORMAT: 'json' }, 'SERVICE_LOG_FORMAT'), 'json');
  assert.is(pickLogFormat({ HUB_LOG_FORMAT: 'pretty', JOURNAL_STREAM: '8:1234' }, 'HUB_LOG_FORMAT'), 'pretty');
  assert.is(pickLogFormat({ SERVICE_LOG_FORMAT: 'journald' }, 'SERVICE_LOG_FORMAT'), 'journald');
});

test('any other value is refused like every bad environment value: one line naming the variable', () => {
  for (const value of ['xml', 'JSON', ' json']) {
    try {
      pickLogFormat({ SERVICE_LOG_FORMAT: value }, 'SERVICE_LOG_FORMAT');
      assert.unreachable(`accepted ${JSON.stringify(value)}`);
    } catch (e) {
      assert.instance(e, StartupError);
      assert.is((e as StartupError).exitCode, 1);
      assert.is((e as Error).message, `SERVICE_LOG_FORMAT: expected one of json, journald, pretty, or unset to choose by where the output goes, got ${JSON.stringify(value)}`);
    }
  }
});

test.run();
