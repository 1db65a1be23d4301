/**
 * controllerIdentity against the embedded API server with RBAC and ServiceAccount tokens: the manifest
 * applied (twice: a restart of `certkit up` re-applies it), the client authenticated as the manifest's
 * ServiceAccount with exactly its permissions, and tokens requested again at 80% of their lifetime.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isForbidden, type KubeObject } from '@certkit/apimachinery';
import { builtins, KubeClient, loadKubeconfig, type ResourceRef } from '@certkit/runtime';
import { testServiceAccountTokens } from '@certkit/testenv/apiserver/service-account-tokens';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { controllerIdentity, parseRbacManifest } from './controller-identity.ts';
import { CONTROLLER_RBAC_YAML } from './rbac-manifest.ts';

const SELF_SUBJECT_REVIEWS: ResourceRef = {
  group: 'authentication.k8s.io',
  version: 'v1',
  resource: 'selfsubjectreviews',
  kind: 'SelfSubjectReview',
  namespaced: false,
};

const CLUSTER_ROLES: ResourceRef = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'clusterroles',
  kind: 'ClusterRole',
  namespaced: false,
};

async function whoami(client: KubeClient): Promise<string | undefined> {
  const review = (await client.resource(SELF_SUBJECT_REVIEWS).create(undefined, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
    metadata: {},
  })) as KubeObject & { status?: { userInfo?: { username?: string } } };
  return review.status?.userInfo?.username;
}

describe('controllerIdentity', () => {
  let server: TestServer;
  let admin: KubeClient;
  let tokenRequests = 0;

  before(async () => {
    server = await startTestServer({ serviceAccountTokens: testServiceAccountTokens() });
    admin = new KubeClient({
      ...(await loadKubeconfig({ path: server.kubeconfigPath })),
      qps: -1,
      onRequest: ({ verb, resource }) => {
        if (verb === 'create' && resource === 'serviceaccounts') tokenRequests++;
      },
    });
  });

  after(async () => {
    admin?.close();
    await server?.close();
  });

  it('authenticates as the manifest ServiceAccount, allowed what the manifest grants and nothing more', async () => {
    const identity = await controllerIdentity(admin, CONTROLLER_RBAC_YAML);
    assert.equal(identity.username, 'system:serviceaccount:certkit:certkit');
    assert.equal(identity.config.token, undefined, 'the admin token must not be inherited');
    const client = new KubeClient({ ...identity.config, qps: -1 });
    try {
      assert.equal(await whoami(client), identity.username);
      assert.notEqual(await whoami(admin), identity.username);
      // Granted by the ClusterRole: Secrets in any namespace.
      await client.resource(builtins.secrets).list('default');
      // Not granted: deleting a namespace, reading ClusterRoles.
      await assert.rejects(client.resource(builtins.namespaces).delete(undefined, 'default'), (err) => {
        assert.ok(isForbidden(err), String(err));
        assert.match(
          (err as Error).message,
          /User "system:serviceaccount:certkit:certkit" cannot delete resource "namespaces"/,
        );
        return true;
      });
      await assert.rejects(client.resource(CLUSTER_ROLES).list(undefined), (err) => isForbidden(err));
    } finally {
      client.close();
    }
  });

  it('applies the manifest again over what the first start created, restoring an edited role', async () => {
    const roles = admin.resource(CLUSTER_ROLES);
    const role = await roles.get(undefined, 'certkit-controller');
    await roles.update({ ...role, rules: [] } as KubeObject);
    await controllerIdentity(admin, CONTROLLER_RBAC_YAML);
    const restored = (await roles.get(undefined, 'certkit-controller')) as KubeObject & { rules: unknown[] };
    const manifestRole = parseRbacManifest(CONTROLLER_RBAC_YAML).find((o) => o.kind === 'ClusterRole') as
      (KubeObject & { rules: unknown[] }) | undefined;
    assert.equal(restored.rules.length, manifestRole!.rules.length);
  });

  it('requests a new token once 80% of the lifetime has passed, not before', async () => {
    let clock = Date.now();
    const identity = await controllerIdentity(admin, CONTROLLER_RBAC_YAML, {
      tokenExpirationSeconds: 3600,
      now: () => clock,
    });
    const client = new KubeClient({ ...identity.config, qps: -1 });
    try {
      const before = tokenRequests;
      await whoami(client);
      await whoami(client);
      assert.equal(tokenRequests - before, 1, 'one TokenRequest for the first requests');
      clock += 2870_000; // 79.7% of an hour
      await whoami(client);
      assert.equal(tokenRequests - before, 1, 'no TokenRequest before 80% of the lifetime');
      clock += 20_000; // 80.3%
      assert.equal(await whoami(client), identity.username);
      assert.equal(tokenRequests - before, 2, 'a new TokenRequest after 80% of the lifetime');
    } finally {
      client.close();
    }
  });

  it('refuses a manifest with a kind it does not apply, or without one ServiceAccount', async () => {
    await assert.rejects(
      controllerIdentity(admin, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n'),
      /document 1: apps\/v1\/Deployment is not one of/,
    );
    await assert.rejects(
      controllerIdentity(admin, 'apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n'),
      /defines 0 ServiceAccounts; it must define one/,
    );
  });
});
