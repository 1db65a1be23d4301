import assert from 'node:assert/strict';
import type { ClientRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';
import { eventually } from '@certkit/testenv/eventually';

/**
 * --max-requests-inflight and --max-mutating-requests-inflight over real HTTPS: a request beyond a full pool
 * gets 429 with Retry-After, watches and health probes never count, the two pools are apart, and a slot is
 * given back when its response ends.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
});
after(async () => {
  await t.close();
});

const inflight = (kind: 'readOnly' | 'mutating') =>
  Number(
    new RegExp(`apiserver_current_inflight_requests\\{request_kind="${kind}"\\} (\\d+)`).exec(
      t.server.metrics.render(),
    )?.[1],
  );

/**
 * A request the server keeps in flight until released: a create whose body has not all arrived (the server
 * waits for the rest), or a read the server holds (a get at a resourceVersion the cache has not reached,
 * which waits up to 3 s for it).
 */
interface Held {
  done: Promise<number>;
  release(): void;
}

function hold(method: string, path: string, server = t): Held {
  const agent = new Agent({ ca: server.caCertPem });
  const body = JSON.stringify({ metadata: { name: `held-${Math.random().toString(36).slice(2)}` } });
  const headers: Record<string, string> = {
    Authorization: `Bearer ${server.token}`,
    Accept: 'application/json',
  };
  if (method === 'POST') {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(body.length);
  }
  let req!: ClientRequest;
  const done = new Promise<number>((resolve, reject) => {
    req = request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        agent.destroy();
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', reject);
  });
  if (method === 'POST') req.write(body.slice(0, 5));
  else req.end();
  return { done, release: () => req.end(body.slice(5)) };
}

describe('inflight limits', () => {
  it('answers a mutating request beyond the limit with a 429 Status and Retry-After: 1', async () => {
    const held = hold('POST', '/api/v1/namespaces/default/configmaps');
    await eventually(() => inflight('mutating') === 1, 'the held create to be admitted', 5_000, 5);
    const refused = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'refused' } },
    });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.json.kind, 'Status');
    assert.equal(refused.json.reason, 'TooManyRequests');
    assert.equal(refused.json.message, 'Too many requests, please try again later.');
    assert.equal(refused.json.details.retryAfterSeconds, 1);
    // Deletes and patches are mutating too.
    assert.equal((await t.fetch('DELETE', '/api/v1/namespaces/default/configmaps/x')).status, 429);
    // The read-only pool is apart: reads go on.
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    held.release();
    assert.equal(await held.done, 201);
    await eventually(() => inflight('mutating') === 0, 'the slot to be given back', 5_000, 5);
    const later = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'later' } },
    });
    assert.equal(later.status, 201);
    assert.match(t.server.metrics.render(), /apiserver_dropped_requests_total\{request_kind="mutating"\} 2/);
  });

  it('answers a read beyond the limit with 429, while watches and health probes do not count', async () => {
    const { json } = await t.fetch('GET', '/api/v1/namespaces/default/configmaps');
    // A watch is long-running: it holds no slot, so the read after it is served.
    const watch = await openWatch(t, '/api/v1/namespaces/default/configmaps?watch=true');
    assert.equal(watch.status, 200);
    const future = Number(json.metadata.resourceVersion) + 1000;
    const held = hold('GET', `/api/v1/namespaces/default/configmaps/later?resourceVersion=${future}`);
    await eventually(() => inflight('readOnly') === 1, 'the held read to be admitted', 5_000, 5);
    const refused = await t.fetch('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.json.reason, 'TooManyRequests');
    assert.equal((await t.fetch('GET', '/version')).status, 429);
    for (const probe of ['/healthz', '/livez', '/readyz', '/readyz/ping']) {
      assert.equal((await t.fetch('GET', probe)).status, 200, probe);
    }
    // Another watch opens while the pool is full.
    const second = await openWatch(t, '/api/v1/namespaces/default/secrets?watch=1');
    assert.equal(second.status, 200);
    // Writes have their own pool.
    const created = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'during-read' } },
    });
    assert.equal(created.status, 201);
    await watch.waitFor(1);
    // The held read times out waiting for its resourceVersion (504) and gives its slot back.
    assert.equal(await held.done, 504);
    await eventually(() => inflight('readOnly') === 0, 'the slot to be given back', 5_000, 5);
    assert.equal((await t.fetch('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    watch.close();
    second.close();
  });

  it('counts nothing for unauthenticated requests, refused before the limit as in kube', async () => {
    const held = hold('POST', '/api/v1/namespaces/default/configmaps');
    await eventually(() => inflight('mutating') === 1, 'the held create to be admitted', 5_000, 5);
    const anonymous = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'anon' } },
      anonymous: true,
    });
    assert.equal(anonymous.status, 401);
    held.release();
    assert.equal(await held.done, 201);
  });
});

describe('inflight limits of 0', () => {
  it('mean no limit, not none allowed', async () => {
    const unlimited = await startTestServer({ maxRequestsInflight: 0, maxMutatingRequestsInflight: 0 });
    try {
      const held = hold('POST', '/api/v1/namespaces/default/configmaps', unlimited);
      const created = await unlimited.fetch('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'while-held' } },
      });
      assert.equal(created.status, 201);
      assert.equal((await unlimited.fetch('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
      held.release();
      assert.equal(await held.done, 201);
    } finally {
      await unlimited.close();
    }
  });
});

describe('a request body that never arrives', () => {
  it(
    'is cut off with 504 after the body timeout, giving its mutating slot back',
    { timeout: 20_000 },
    async () => {
      // A client trickling its body held the slot for as long as it liked: 200 of them (the default limit)
      // refused every write in the cluster.
      const slow = await startTestServer({ maxMutatingRequestsInflight: 1, bodyTimeoutMs: 1000 });
      try {
        const mutating = () =>
          Number(
            /apiserver_current_inflight_requests\{request_kind="mutating"\} (\d+)/.exec(
              slow.server.metrics.render(),
            )?.[1],
          );
        const held = hold('POST', '/api/v1/namespaces/default/configmaps', slow);
        const started = Date.now();
        while (mutating() !== 1) {
          assert.ok(Date.now() - started < 5000, 'the held create was never admitted');
          await new Promise((r) => setTimeout(r, 5));
        }
        const refused = await slow.fetch('POST', '/api/v1/namespaces/default/configmaps', {
          body: { metadata: { name: 'refused' } },
        });
        assert.equal(refused.status, 429);
        assert.equal(await held.done, 504);
        assert.ok(Date.now() - started >= 900, 'cut off before the body timeout');
        await eventually(() => mutating() === 0, 'the slot to be given back', 5_000, 5);
        const created = await slow.fetch('POST', '/api/v1/namespaces/default/configmaps', {
          body: { metadata: { name: 'after' } },
        });
        assert.equal(created.status, 201, created.text);
      } finally {
        await slow.close();
      }
    },
  );
});
