import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { ensureSigningKey } from '../security/serviceaccount/keys.ts';

/**
 * `serviceaccounts/token` in discovery, as kube-apiserver lists it: in /api/v1's APIResourceList (legacy) and
 * among the ServiceAccounts' subresources in /api's APIGroupDiscoveryList (aggregated), a TokenRequest of
 * authentication.k8s.io/v1 that can only be created; and only on a server that issues tokens.
 */

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

interface LegacyResource {
  name: string;
}
interface AggregatedResource {
  resource: string;
  subresources?: { subresource: string }[];
}

async function tokenEntries(t: TestServer) {
  const legacy = await t.fetch('GET', '/api/v1');
  assert.equal(legacy.status, 200);
  const aggregated = await t.fetch('GET', '/api', { headers: { Accept: AGGREGATED } });
  assert.equal(aggregated.headers['content-type'], AGGREGATED);
  const serviceAccounts = aggregated.json.items[0].versions[0].resources.find(
    (r: AggregatedResource) => r.resource === 'serviceaccounts',
  ) as AggregatedResource;
  return {
    legacy: (legacy.json.resources as LegacyResource[]).filter((r) => r.name.startsWith('serviceaccounts')),
    aggregated: serviceAccounts.subresources ?? [],
  };
}

describe('serviceaccounts/token in discovery', () => {
  let keyDir: string;
  const servers: TestServer[] = [];

  before(async () => {
    keyDir = await mkdtemp(join(tmpdir(), 'certkit-token-discovery-'));
  });
  after(async () => {
    for (const server of servers) await server.close();
    await rm(keyDir, { recursive: true, force: true });
  });

  it('is listed, legacy and aggregated, on a server that issues tokens', async () => {
    const signingKey = await ensureSigningKey(keyDir);
    const t = await startTestServer({
      serviceAccountTokens: { issuers: ['https://issuer.certkit.test'], signingKey },
    });
    servers.push(t);
    const { legacy, aggregated } = await tokenEntries(t);
    assert.deepEqual(legacy[1], {
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
    assert.deepEqual(aggregated, [
      {
        subresource: 'token',
        responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
        verbs: ['create'],
      },
    ]);
  });

  it('is not listed where no token can be had', async () => {
    const t = await startTestServer();
    servers.push(t);
    const { legacy, aggregated } = await tokenEntries(t);
    assert.deepEqual(
      legacy.map((r) => r.name),
      ['serviceaccounts'],
    );
    assert.deepEqual(aggregated, []);
  });
});
