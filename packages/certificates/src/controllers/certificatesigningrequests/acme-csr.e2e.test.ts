/**
 * The ACME CertificateSigningRequest signer against Pebble: kubectl creates a CSR naming an ACME Issuer
 * (`issuers.cert-manager.io/<ns>.<name>`), approves it, and the controller orders the certificate (an Order in
 * the Issuer's namespace owned by the CSR, HTTP-01 on the embedded listener) and writes Pebble's chain to
 * status.certificate. A CSR whose common name is not among its DNS names fails as cert-manager fails it.
 */

import assert from 'node:assert/strict';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ACME_ZONE,
  type AcmeEnvironment,
  acmeEnvironmentSkip,
  eventually,
  startAcmeEnvironment,
} from '@certkit/testenv/acme/acme-environment';
import { opensslUnavailable, runOpenssl } from '@certkit/testenv/conformance/openssl';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import type { Order } from '../../api/types.ts';
import { enabledControllers } from '../enabled-controllers.ts';

const skip = acmeEnvironmentSkip() || kubectlSkip || opensslUnavailable() || false;
const NS = 'acme-csr';

/** A new key and a CSR for `subject` with these DNS names, by openssl. */
function opensslCsr(subject: string, dnsNames: string[]): { keyPem: string; csrPem: string } {
  const result = runOpenssl(
    (dir) => [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'csr.pem'),
      '-subj',
      subject,
      '-addext',
      `subjectAltName=${dnsNames.map((n) => `DNS:${n}`).join(',')}`,
    ],
    {},
    ['key.pem', 'csr.pem'],
  );
  assert.ok(result.ok, result.output);
  return { keyPem: result.files['key.pem'], csrPem: result.files['csr.pem'] };
}

describe('the ACME CertificateSigningRequest signer against Pebble', { skip }, () => {
  let env: AcmeEnvironment;
  let workDir: string;
  let kubectl: Kubectl;

  before(async () => {
    env = await startAcmeEnvironment({
      controllers: enabledControllers(['*'], { certificateSigningRequestControllers: true }),
    });
    workDir = await mkdtemp(join(tmpdir(), 'certkit-acme-csr-'));
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: env.server.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
      workDir,
    );
    await env.readyIssuer(NS, 'pebble', [env.http01Solver()]);
  });

  after(async () => {
    await env?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  async function createCsr(name: string, csrPem: string): Promise<void> {
    const manifest = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: {
        request: Buffer.from(csrPem).toString('base64'),
        signerName: `issuers.cert-manager.io/${NS}.pebble`,
        usages: ['digital signature', 'key encipherment', 'server auth'],
      },
    };
    await kubectl.ok('create', '-f', await kubectl.manifest(JSON.stringify(manifest)));
  }

  const getCsr = async (name: string) => JSON.parse(await kubectl.ok('get', 'csr', name, '-o', 'json'));

  it('orders the certificate through HTTP-01 and writes Pebble’s chain, for the CSR’s key', async () => {
    const host = `http.${ACME_ZONE}`;
    const { keyPem, csrPem } = opensslCsr(`/CN=${host}`, [host]);
    await createCsr('acme-web', csrPem);
    await kubectl.ok('certificate', 'approve', 'acme-web');
    const csr = await eventually(
      async () => {
        const csr = await getCsr('acme-web');
        return csr.status?.certificate ? csr : undefined;
      },
      'CSR acme-web issued',
      90_000,
    );
    const chain = Buffer.from(csr.status.certificate, 'base64').toString();
    const leaf = new X509Certificate(chain);
    assert.match(leaf.subjectAltName ?? '', new RegExp(`DNS:${host.replace(/\./g, '\\.')}`));
    assert.match(leaf.issuer, /Pebble Intermediate CA/);
    assert.ok(leaf.publicKey.equals(createPublicKey(keyPem)), 'for the key of the CSR');
    // The Order that did it: in the Issuer's namespace, owned by the CSR, valid.
    const orders = (await env.resources.orders.list(NS)).items as unknown as Order[];
    const order = orders.find((o) => o.metadata.ownerReferences?.[0]?.name === 'acme-web');
    assert.ok(order, `an Order owned by the CSR among ${orders.map((o) => o.metadata.name).join(', ')}`);
    assert.deepEqual(
      {
        kind: order.metadata.ownerReferences?.[0]?.kind,
        apiVersion: order.metadata.ownerReferences?.[0]?.apiVersion,
        uid: order.metadata.ownerReferences?.[0]?.uid,
        state: order.status?.state,
        dnsNames: order.spec.dnsNames,
      },
      {
        kind: 'CertificateSigningRequest',
        apiVersion: 'certificates.k8s.io/v1',
        uid: csr.metadata.uid,
        state: 'valid',
        dnsNames: [host],
      },
    );
    const events = await kubectl.ok(
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      'involvedObject.name=acme-web',
      '-o',
      'json',
    );
    const reasons = JSON.parse(events).items.map((e: { reason: string }) => e.reason);
    for (const reason of ['OrderCreated', 'CertificateIssued']) assert.ok(reasons.includes(reason), reasons);
  });

  it('fails a CSR whose common name is not among its DNS names (InvalidOrder)', async () => {
    await createCsr('acme-bad-cn', opensslCsr(`/CN=elsewhere.${ACME_ZONE}`, [`a.${ACME_ZONE}`]).csrPem);
    await kubectl.ok('certificate', 'approve', 'acme-bad-cn');
    const failed = await eventually(
      async () =>
        (await getCsr('acme-bad-cn')).status?.conditions?.find((c: { type: string }) => c.type === 'Failed'),
      'CSR acme-bad-cn Failed',
      30_000,
    );
    assert.equal(failed.reason, 'InvalidOrder');
    assert.match(failed.message, /"elsewhere\.acme\.test" does not exist in \[a\.acme\.test\]/);
  });

  it('was refused nothing under deploy/rbac.yaml', () => {
    assert.deepEqual(env.forbidden, []);
  });
});
