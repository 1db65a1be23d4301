import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { events as eventsRef } from '../client/builtins.ts';
import { KubeClient } from '../client/kube-client.ts';
import { loadKubeconfig } from '../client/kubeconfig.ts';
import { COMBINED_PREFIX, SPAM_BURST } from './correlator.ts';
import { EventRecorder } from './recorder.ts';

/**
 * The recorder against a real API server: what client-go's EventRecorder writes when a controller records the
 * same thing again and again, read back as `kubectl get events` reads it.
 */

interface CoreEventRead extends KubeObject {
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string };
}

let server: TestServer;
let client: KubeClient;
const writes: string[] = [];

before(async () => {
  server = await startTestServer();
  const config = await loadKubeconfig({ path: server.kubeconfigPath });
  client = new KubeClient({
    ...config,
    qps: -1,
    onRequest: ({ verb, resource, code }) => {
      if (resource === 'events' && verb !== 'list') writes.push(`${verb} ${code}`);
    },
  });
});
after(async () => {
  client?.close();
  await server?.close();
});

function configMap(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '1' },
  };
}

async function eventsAbout(name: string): Promise<CoreEventRead[]> {
  const list = await client
    .resource<CoreEventRead>(eventsRef)
    .list('default', { fieldSelector: `involvedObject.name=${name}` });
  return list.items.sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
}

describe('EventRecorder', () => {
  it('writes a repeated Event once and patches its count, then stops at the spam burst', async () => {
    writes.length = 0;
    const recorder = new EventRecorder(client, { component: 'cert-manager-issuers' });
    for (let i = 0; i < SPAM_BURST + 5; i++) {
      recorder.event(configMap('looping'), 'Warning', 'ErrInitIssuer', 'Error initializing issuer: no CA');
    }
    await recorder.flushed();
    const [event, ...others] = await eventsAbout('looping');
    assert.equal(others.length, 0);
    assert.equal(event.count, SPAM_BURST);
    assert.equal(event.source.component, 'cert-manager-issuers');
    // One create, then one patch per repeat, until the object's bucket is empty.
    assert.deepEqual(writes, ['create 201', ...Array<string>(SPAM_BURST - 1).fill('patch 200')]);
  });

  it('combines the 10th distinct message of one reason into one Event that counts on', async () => {
    const recorder = new EventRecorder(client, { component: 'cert-manager-orders' });
    for (let i = 1; i <= 12; i++) {
      recorder.event(configMap('varied'), 'Warning', 'Failed', `attempt ${i}: connection refused`);
    }
    await recorder.flushed();
    const found = await eventsAbout('varied');
    assert.equal(found.length, 10, found.map((e) => e.message).join('\n'));
    const combined = found.filter((e) => e.message.startsWith(COMBINED_PREFIX));
    assert.equal(combined.length, 1);
    assert.equal(combined[0].message, `${COMBINED_PREFIX}attempt 12: connection refused`);
    assert.equal(combined[0].count, 3);
  });

  it('writes anew an Event deleted since (its TTL passed), counting on', async () => {
    const recorder = new EventRecorder(client, { component: 'cert-manager-challenges' });
    recorder.event(configMap('expired'), 'Normal', 'Presented', 'Presented challenge');
    await recorder.flushed();
    const [first] = await eventsAbout('expired');
    await client.resource(eventsRef).delete('default', first.metadata!.name!);
    recorder.event(configMap('expired'), 'Normal', 'Presented', 'Presented challenge');
    await recorder.flushed();
    const [again, ...others] = await eventsAbout('expired');
    assert.equal(others.length, 0);
    assert.equal(again.metadata!.name, first.metadata!.name);
    assert.equal(again.count, 2);
  });
});
