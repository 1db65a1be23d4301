import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * ConfigMaps and Secrets hold at most 1 MiB of data, as kube-apiserver's validation bounds them: a larger one
 * is a 422 naming the field (`data` for a Secret, the whole object for a ConfigMap), worded as kube words a
 * TooLong field error, once.
 */

describe('ConfigMap and Secret data size', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('refuses more than 1 MiB with one "Too long" on the field', async () => {
    const configMap = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'big' }, data: { a: 'x'.repeat(1_048_577) } },
    });
    assert.equal(configMap.status, 422);
    assert.equal(
      configMap.json.message,
      'ConfigMap "big" is invalid: : Too long: may not be more than 1048576 bytes',
    );
    assert.deepEqual(configMap.json.details.causes, [
      { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 1048576 bytes', field: '' },
    ]);
    const secret = await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      body: { metadata: { name: 'big' }, data: { a: Buffer.alloc(1_048_577).toString('base64') } },
    });
    assert.equal(secret.status, 422);
    assert.equal(
      secret.json.message,
      'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes',
    );
    const fits = await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      body: { metadata: { name: 'fits' }, data: { a: Buffer.alloc(1_048_576).toString('base64') } },
    });
    assert.equal(fits.status, 201, fits.text.slice(0, 300));
  });
});
