import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureSigningKey } from '../security/serviceaccount/keys.ts';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';
import { kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

/** Every namespace has its `default` ServiceAccount, as on a cluster with kube-controller-manager. */

let t: TestServer;
let keyDir: string;
before(async () => {
  keyDir = await mkdtemp(join(tmpdir(), 'certkit-sa-keys-'));
  t = await startTestServer({
    serviceAccountTokens: {
      issuers: ['https://kubernetes.default.svc'],
      signingKey: await ensureSigningKey(keyDir),
    },
  });
});
after(async () => {
  await t.close();
  await rm(keyDir, { recursive: true, force: true });
});

const account = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`;
const exists = (ns: string) => async () => (await t.fetch('GET', account(ns))).status === 200;

describe('the default ServiceAccount', () => {
  it('is in the namespaces every cluster starts with', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      await eventually(exists(ns), `default ServiceAccount in ${ns}`);
    }
  });

  it('is made with a new namespace, and made again when deleted', async () => {
    assert.equal(
      (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'sa-new' } } })).status,
      201,
    );
    await eventually(exists('sa-new'), 'default ServiceAccount in the new namespace');
    const first = (await t.fetch('GET', account('sa-new'))).json;
    assert.equal((await t.fetch('DELETE', account('sa-new'))).status, 200);
    await eventually(async () => {
      const again = await t.fetch('GET', account('sa-new'));
      return again.status === 200 && again.json.metadata.uid !== first.metadata.uid;
    }, 'the deleted default ServiceAccount made again');
  });

  it('does not hold up the deletion of its namespace', async () => {
    await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'sa-gone' } } });
    await eventually(exists('sa-gone'), 'default ServiceAccount in sa-gone');
    assert.equal((await t.fetch('DELETE', '/api/v1/namespaces/sa-gone')).status, 200);
    await eventually(
      async () => (await t.fetch('GET', '/api/v1/namespaces/sa-gone')).status === 404,
      'the namespace gone',
    );
    assert.equal((await t.fetch('GET', account('sa-gone'))).status, 404);
  });

  it('kubectl create token default works as in Kubernetes’ docs', { skip: kubectlSkip }, async () => {
    await eventually(exists('default'), 'default ServiceAccount in default');
    const kubectl = kubectlFor({ ...process.env, KUBECONFIG: t.kubeconfigPath }, t.dataDir);
    const token = (await kubectl.ok('create', 'token', 'default')).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    assert.equal(claims.sub, 'system:serviceaccount:default:default');
  });
});
