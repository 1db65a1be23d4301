import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { configMaps, namespaces, secrets } from './builtins.ts';
import { KubeClient } from './kube-client.ts';
import { loadKubeconfig } from './kubeconfig.ts';

/**
 * Names and namespaces that are not path segments (`.`, `..`, with `/` or `%`) are refused by the client
 * before anything is sent, as client-go's request builder refuses them. Sent, a `..` name was a dot segment
 * that URL resolution removed with the segment before it: deleting the Secret `..` in namespace `victim`
 * deleted the namespace `victim`, and all that was in it, with the caller's rights.
 */

describe('names that are not path segments', () => {
  let t: TestServer;
  let kube: KubeClient;
  before(async () => {
    t = await startTestServer();
    kube = new KubeClient({ ...(await loadKubeconfig({ path: t.kubeconfigPath })), qps: -1 });
    await kube.resource(namespaces).create(undefined, { metadata: { name: 'victim' } });
    await kube.resource(configMaps).create('victim', { metadata: { name: 'kept' } });
  });
  after(async () => {
    kube.close();
    await t.close();
  });

  it('refuses them in every verb, and the namespace and its objects stay', async () => {
    const secretClient = kube.resource(secrets);
    for (const [name, why] of [
      ['..', "may not be '..'"],
      ['.', "may not be '.'"],
      ['a/b', "may not contain '/'"],
      ['a%2e', "may not contain '%'"],
    ]) {
      const message = `invalid resource name ${JSON.stringify(name)}: [${why}]`;
      await assert.rejects(secretClient.delete('victim', name), { message });
      await assert.rejects(secretClient.get('victim', name), { message });
      await assert.rejects(secretClient.patch('victim', name, 'merge', { data: {} }), { message });
      await assert.rejects(secretClient.update({ metadata: { name, namespace: 'victim' } }), {
        message,
      });
      await assert.rejects(kube.resource(configMaps).list(name), {
        message: `invalid namespace ${JSON.stringify(name)}: [${why}]`,
      });
    }
    const ns = await kube.resource(namespaces).get(undefined, 'victim');
    assert.equal(ns.metadata?.deletionTimestamp, undefined);
    assert.equal((await kube.resource(configMaps).get('victim', 'kept')).metadata?.name, 'kept');
  });
});
