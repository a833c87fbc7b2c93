import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REDACTION_MARKER, redactSecrets, redactSections, restoreSecrets } from '../../../src/bridge/config/secrets.ts';

const hub = { enabled: true, username: 'u', password: 'pw' };

test('redaction replaces set secrets only and copies', () => {
  const red = redactSecrets('hub', hub);
  assert.equal(red, { enabled: true, username: 'u', password: REDACTION_MARKER });
  assert.is(hub.password, 'pw');
  assert.equal(redactSecrets('hub', { password: null }), { password: null });
  assert.equal(redactSecrets('radio', { hop_limit: 3 }), { hop_limit: 3 });
  assert.is(redactSecrets('hub', null), null);
  assert.equal(redactSections({ hub, radio: { password: 'not a secret field here' } }), {
    hub: { ...hub, password: REDACTION_MARKER },
    radio: { password: 'not a secret field here' },
  });
});

test('the marker written back restores the stored secret; with none stored it is reported missing', () => {
  assert.equal(restoreSecrets('hub', { ...hub, password: REDACTION_MARKER }, hub), { value: hub, missing: [] });
  assert.equal(restoreSecrets('hub', { password: 'new' }, hub), { value: { password: 'new' }, missing: [] });
  assert.equal(restoreSecrets('hub', { password: REDACTION_MARKER }, { password: null }).missing, ['password']);
  assert.equal(restoreSecrets('hub', { password: REDACTION_MARKER }, undefined).missing, ['password']);
  assert.equal(restoreSecrets('owner', { long_name: REDACTION_MARKER }, {}).value, { long_name: REDACTION_MARKER });
});

test.run();
