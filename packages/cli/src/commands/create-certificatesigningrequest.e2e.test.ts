import assert from 'node:assert/strict';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Certificate, Issuer } from '@certkit/certificates/api/types';
import { certificatesRef, issuersRef } from '@certkit/certificates/controllers/refs';
import { certificateSigningRequestsRef } from '@certkit/certificates/controllers/certificatesigningrequests/index';
import { builtins, KubeClient, loadKubeconfig, type ResourceClient } from '@certkit/runtime';
import { type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { eventually } from '@certkit/testenv/eventually';

/**
 * `certkit x create certificatesigningrequest` as a user runs it, against `certkit up
 * --feature-gates=ExperimentalCertificateSigningRequestControllers=true`: the CSR names the Certificate's CA
 * Issuer as its signer and carries its duration and isCA; with -w it waits while kubectl approves it, then
 * writes the certificate the controller's CA signer issued.
 */

describe('certkit x create csr (against certkit up with the CSR signers)', { skip: kubectlSkip }, () => {
  let dir: string;
  let cli: RunningCli;
  let admin: KubeClient;
  let kubectl: Kubectl;
  let certificates: ResourceClient<Certificate>;
  let caCertificatePem: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-x-create-csr-'));
    cli = await startCli([
      'up',
      '--data-dir',
      dir,
      '--port',
      '0',
      '--feature-gates=ExperimentalCertificateSigningRequestControllers=true',
    ]);
    const kubeconfig = join(dir, 'kubeconfig');
    admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'kubectl-cache') },
      dir,
    );
    certificates = admin.resource<Certificate>(certificatesRef);
    const issuers = admin.resource<Issuer>(issuersRef);
    await eventually(() => issuers.list('default', { limit: 1 }), 'the CRDs served', 30_000);
    // selfsigned → the CA Certificate "root" → the CA Issuer "ca", the signer of the CSRs.
    await issuers.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'selfsigned', namespace: 'default' },
      spec: { selfSigned: {} },
    } as Issuer);
    await certificates.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'root', namespace: 'default' },
      spec: {
        secretName: 'root-tls',
        isCA: true,
        commonName: 'csr test root',
        issuerRef: { name: 'selfsigned' },
        privateKey: { algorithm: 'ECDSA' },
      },
    } as Certificate);
    const secret = await eventually(
      async () => {
        const s = await admin
          .resource(builtins.secrets)
          .get('default', 'root-tls')
          .catch(() => undefined);
        return (s?.data as Record<string, string> | undefined)?.['tls.crt'] ? s : undefined;
      },
      'root-tls issued',
      30_000,
    );
    caCertificatePem = Buffer.from((secret.data as Record<string, string>)['tls.crt'], 'base64').toString();
    await issuers.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'ca', namespace: 'default' },
      spec: { ca: { secretName: 'root-tls' } },
    } as Issuer);
    await eventually(
      async () =>
        (await issuers.get('default', 'ca')).status?.conditions?.some(
          (c) => c.type === 'Ready' && c.status === 'True',
        ) || undefined,
      'Issuer ca Ready',
      30_000,
    );
  });

  after(async () => {
    admin?.close();
    await cli?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('creates the CSR for the Issuer, waits while kubectl approves it, writes key and certificate', async () => {
    const manifest = join(dir, 'web.yaml');
    await writeFile(
      manifest,
      `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web, namespace: default, labels: {team: web}}
spec:
  secretName: unused
  commonName: web.example.com
  dnsNames: [web.example.com]
  duration: 3h
  usages: [server auth, digital signature]
  issuerRef: {name: ca}
  privateKey: {algorithm: ECDSA, size: 384}
`,
    );
    const run = runCli(
      [
        'x',
        'create',
        'csr',
        'web-csr',
        '-f',
        manifest,
        '-w',
        '--timeout',
        '60s',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
      ],
      { cwd: dir },
    );
    const csr = await eventually(
      () =>
        admin
          .resource(certificateSigningRequestsRef)
          .get(undefined, 'web-csr')
          .catch(() => undefined),
      'CSR web-csr created',
      30_000,
    );
    const spec = csr.spec as {
      signerName: string;
      usages: string[];
      expirationSeconds: number;
      username: string;
    };
    assert.equal(spec.signerName, 'issuers.cert-manager.io/default.ca');
    assert.deepEqual(spec.usages, ['digital signature', 'server auth']);
    assert.equal(spec.expirationSeconds, 3 * 3600);
    assert.equal(csr.metadata?.labels?.team, 'web');
    assert.deepEqual(
      {
        duration: csr.metadata?.annotations?.['experimental.cert-manager.io/request-duration'],
        isCA: csr.metadata?.annotations?.['experimental.cert-manager.io/request-is-ca'],
      },
      { duration: '3h0m0s', isCA: 'false' },
    );
    await kubectl.ok('certificate', 'approve', 'web-csr');

    const result = await run;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Private key written to file web-csr\.key/);
    assert.match(result.stderr, /CertificateSigningRequest web-csr has been created/);
    assert.match(result.stderr, /CertificateSigningRequest web-csr has been signed/);
    assert.match(result.stderr, /Certificate written to file web-csr\.crt/);
    assert.equal((await stat(join(dir, 'web-csr.key'))).mode & 0o777, 0o600);
    const key = await readFile(join(dir, 'web-csr.key'), 'utf8');
    const certificate = new X509Certificate(await readFile(join(dir, 'web-csr.crt')));
    assert.equal(certificate.subject, 'CN=web.example.com');
    assert.ok(
      certificate.verify(new X509Certificate(caCertificatePem).publicKey),
      'signed by the Issuer’s CA',
    );
    assert.ok(certificate.publicKey.equals(createPublicKey(key)), 'for the key written');
    assert.equal((Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)) / 1000, 3 * 3600);
  });

  it('says which flag is missing, and which issuer kind does not exist', async () => {
    const missing = await runCli(['x', 'create', 'csr', 'nothing'], { cwd: dir });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /please specify by using --from-certificate-file or -f flag/);

    const manifest = join(dir, 'external.yaml');
    await writeFile(
      manifest,
      `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: external}
spec: {secretName: x, commonName: x.example.com, issuerRef: {name: x, kind: NoSuchIssuer, group: example.com}}
`,
    );
    const unknown = await runCli(
      ['x', 'create', 'csr', 'external', '-f', manifest, '--kubeconfig', join(dir, 'kubeconfig')],
      { cwd: dir },
    );
    assert.notEqual(unknown.code, 0);
    assert.match(
      unknown.stderr,
      /issuer references a resource definition which does not exist group=example\.com kind=NoSuchIssuer/,
    );
  });
});
