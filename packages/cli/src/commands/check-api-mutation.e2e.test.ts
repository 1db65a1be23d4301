import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { certManagerAdmission, certManagerMutation } from '@certkit/certificates/api/admission';
import { installCrds } from '@certkit/certificates/controller';
import { buildCertificateRequest, generatePrivateKey } from '@certkit/certificates/pki/index';
import { KubeClient, loadKubeconfig } from '@certkit/runtime';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { checkOnce, MUTATION_INCORRECT, MUTATION_MISSING } from './check-api.ts';

/**
 * `check api`'s mutating-webhook check, as cmctl's: an API server that records no requester in a
 * CertificateRequest is not ready, whether no webhook runs at all or only the validating one (which then
 * refuses the request's identity); with cert-manager's mutation and validation both, it is.
 */
describe('certkit check api: the mutating webhook', () => {
  let csr: string;
  const servers: TestServer[] = [];

  before(async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 521 });
    csr = Buffer.from(await buildCertificateRequest({ commonName: 'cmapichecker' }, key)).toString('base64');
  });

  after(async () => {
    for (const server of servers) await server.close();
  });

  async function clientOf(options: Parameters<typeof startTestServer>[0]): Promise<KubeClient> {
    const server = await startTestServer(options);
    servers.push(server);
    const client = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
    await installCrds(client);
    return client;
  }

  it('fails while CertificateRequests come back without a requester (no webhook at all)', async () => {
    const client = await clientOf({});
    try {
      await assert.rejects(checkOnce(client, 'default', csr, 10_000), { message: MUTATION_MISSING });
    } finally {
      client.close();
    }
  });

  it('fails when the validation runs without the mutation: the identity is refused', async () => {
    const client = await clientOf({ admission: certManagerAdmission });
    try {
      await assert.rejects(checkOnce(client, 'default', csr, 10_000), (err: Error) => {
        assert.equal(err.message, MUTATION_INCORRECT);
        assert.match(
          String((err.cause as Error).message),
          /spec\.username: Forbidden: username identity must be that of the requester/,
        );
        return true;
      });
    } finally {
      client.close();
    }
  });

  it('passes once the mutation records the requester', async () => {
    const client = await clientOf({
      admission: certManagerAdmission,
      admissionMutation: certManagerMutation,
    });
    try {
      await checkOnce(client, 'default', csr, 10_000);
    } finally {
      client.close();
    }
  });
});
