import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * `?timeout=` as kube-apiserver's request deadline filter reads it: a value Go's time.ParseDuration refuses is
 * a 400 on any request that is not long-running (before authentication, as the filter comes first), with the
 * parser's text; watches do not read it.
 */

describe('?timeout=', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('refuses a malformed duration with 400 BadRequest and the parse error', async () => {
    for (const [value, reason] of [
      ['abc', 'time: invalid duration "abc"'],
      ['10', 'time: missing unit in duration "10"'],
      ['1e9s', 'time: unknown unit "e" in duration "1e9s"'],
      ['9999999999h', 'time: invalid duration "9999999999h"'],
    ]) {
      for (const [method, path, anonymous] of [
        ['GET', '/api/v1/namespaces/default/configmaps', false],
        ['POST', '/api/v1/namespaces/default/configmaps', false],
        ['GET', '/version', true],
      ] as const) {
        const res = await t.fetch(method, `${path}?timeout=${encodeURIComponent(value)}`, {
          anonymous,
          body: method === 'POST' ? { metadata: { name: 'never' } } : undefined,
        });
        assert.equal(res.status, 400, `${method} ${path} timeout=${value}: ${res.text}`);
        assert.equal(res.json.reason, 'BadRequest');
        assert.equal(res.json.message, `invalid timeout specified in the request URL - ${reason}`);
      }
    }
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps/never')).status, 404);
  });

  it('takes well-formed ones (negative and zero too) and leaves watches alone', async () => {
    for (const value of ['30s', '1m0s', '-1s', '0', '1h']) {
      const res = await t.fetch('GET', `/api/v1/namespaces/default/configmaps?timeout=${value}`);
      assert.equal(res.status, 200, `timeout=${value}: ${res.text}`);
    }
    const watch = await t.fetch(
      'GET',
      '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&timeout=abc',
    );
    assert.equal(watch.status, 200, watch.text);
  });
});
