import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';

/** Events expire their TTL after their last write (kube-apiserver's --event-ttl), on real SQLite. */

const TTL_MS = 1500;

function event(name: string, lastTimestamp = new Date().toISOString().slice(0, 19) + 'Z') {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'default' },
    reason: 'Testing',
    message: name,
    type: 'Normal',
    source: { component: 'test' },
    firstTimestamp: lastTimestamp,
    lastTimestamp,
    count: 1,
  };
}

const path = (name: string) => `/api/v1/namespaces/default/events/${name}`;
const exists = async (t: TestServer, name: string) => (await t.fetch('GET', path(name))).status === 200;

describe('event TTL', () => {
  it('deletes an Event once its last write is older than the TTL, and not before', async () => {
    const t = await startTestServer({ eventTtlMs: TTL_MS });
    try {
      const created = Date.now();
      for (const name of ['once', 'again']) {
        assert.equal(
          (await t.fetch('POST', '/api/v1/namespaces/default/events', { body: event(name) })).status,
          201,
        );
      }
      await new Promise((r) => setTimeout(r, 1000));
      // A second write (client-go counting a repeat) starts the TTL over, as a new etcd lease would.
      const again = (await t.fetch('GET', path('again'))).json;
      again.count = 2;
      assert.equal((await t.fetch('PUT', path('again'), { body: again })).status, 200);

      await eventually(async () => !(await exists(t, 'once')), 'the Event written once to expire');
      assert.ok(Date.now() - created >= TTL_MS, 'not before its TTL');
      assert.ok(await exists(t, 'again'), 'the Event written again lives on');
      await eventually(async () => !(await exists(t, 'again')), 'the Event written again to expire');
    } finally {
      await t.close();
    }
  });

  it('counts Events stored before the start from their own timestamps', async () => {
    const old = new Date(Date.now() - 2 * 3600_000).toISOString().slice(0, 19) + 'Z';
    const stored = (name: string, stamp: string) =>
      JSON.stringify({
        ...event(name, stamp),
        metadata: { name, namespace: 'default', creationTimestamp: stamp, uid: name },
      });
    const t = await startTestServer({
      eventTtlMs: 60 * 60 * 1000,
      seed: async (storage) => {
        await storage.create('/registry/core/events/default/stale', stored('stale', old));
        await storage.create(
          '/registry/core/events/default/fresh',
          stored('fresh', new Date().toISOString().slice(0, 19) + 'Z'),
        );
      },
    });
    try {
      // Two hours old against a TTL of one: gone at the sweep after the first read; the fresh one stays.
      await eventually(async () => !(await exists(t, 'stale')), 'the stale Event to expire');
      assert.ok(await exists(t, 'fresh'));
    } finally {
      await t.close();
    }
  });
});
