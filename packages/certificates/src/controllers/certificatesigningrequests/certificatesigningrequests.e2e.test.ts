/**
 * cert-manager's Kubernetes CertificateSigningRequest signers, as a user drives them: kubectl creates a CSR
 * (made by openssl) naming `clusterissuers.cert-manager.io/<name>` or `issuers.cert-manager.io/<ns>.<name>`,
 * `kubectl certificate approve` approves it, and the controller, run with the
 * ExperimentalCertificateSigningRequestControllers gate's set under deploy/rbac.yaml's identity, writes the
 * certificate, which openssl reads back: the request-duration and request-is-ca annotations, chains and
 * self-signatures. A requester who may not reference a namespaced Issuer gets Failed/DeniedReference; a
 * duration under 600 s, Failed/InvalidDuration.
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import type { Event } from 'kubernetes-types/core/v1.d.ts';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { tableRecords } from '@certkit/testenv/kubectl/table';
import {
  type Environment,
  eventually,
  prepareIssuer,
  type PreparedIssuer,
  startEnvironment,
} from '@certkit/testenv/conformance/environment';
import { opensslUnavailable, opensslVerify, runOpenssl } from '@certkit/testenv/conformance/openssl';
import { enabledControllers } from '../enabled-controllers.ts';

const skip = kubectlSkip || opensslUnavailable() || false;
const NS = 'csr-signers';
const DAVE = { token: 'dave-token', user: { name: 'dave', uid: 'd-1', groups: ['csr-requesters'] } };

let env: Environment;
let workDir: string;
let admin: Kubectl;
let dave: Kubectl;
let caClusterIssuer: PreparedIssuer;
let caIssuer: PreparedIssuer;

/** A new key and a CSR for it, by openssl. */
function keyAndCsr(subject: string): { keyPem: string; csrPem: string } {
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
    ],
    {},
    ['key.pem', 'csr.pem'],
  );
  assert.ok(result.ok, result.output);
  return { keyPem: result.files['key.pem'], csrPem: result.files['csr.pem'] };
}

/** `openssl x509 -text` of a PEM certificate. */
function x509Text(certPem: string): string {
  const result = runOpenssl((dir) => ['x509', '-noout', '-text', '-in', join(dir, 'c.pem')], {
    'c.pem': certPem,
  });
  assert.ok(result.ok, result.output);
  return result.output;
}

/** notAfter − notBefore, in seconds, as openssl reads them. */
function lifetimeSeconds(certPem: string): number {
  const result = runOpenssl(
    (dir) => ['x509', '-noout', '-startdate', '-enddate', '-in', join(dir, 'c.pem')],
    { 'c.pem': certPem },
  );
  assert.ok(result.ok, result.output);
  const date = (key: string) => Date.parse(new RegExp(`${key}=(.*)`).exec(result.output)![1]);
  return (date('notAfter') - date('notBefore')) / 1000;
}

interface CsrOptions {
  signerName: string;
  csrPem: string;
  annotations?: Record<string, string>;
  expirationSeconds?: number;
  usages?: string[];
}

async function createCsr(k: Kubectl, name: string, options: CsrOptions): Promise<void> {
  const manifest = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name, annotations: options.annotations ?? {} },
    spec: {
      request: Buffer.from(options.csrPem).toString('base64'),
      signerName: options.signerName,
      usages: options.usages ?? ['digital signature', 'key encipherment', 'server auth'],
      ...(options.expirationSeconds ? { expirationSeconds: options.expirationSeconds } : {}),
    },
  };
  await k.ok('create', '-f', await k.manifest(JSON.stringify(manifest)));
}

async function getCsr(name: string) {
  return JSON.parse(await admin.ok('get', 'csr', name, '-o', 'json'));
}

/** The issued certificate, once the controller wrote it. */
async function issued(name: string): Promise<string> {
  const csr = await eventually(
    async () => {
      const csr = await getCsr(name);
      return csr.status?.certificate ? csr : undefined;
    },
    `CSR ${name} issued`,
    30_000,
  );
  return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
}

async function failedCondition(name: string) {
  return eventually(
    async () => (await getCsr(name)).status?.conditions?.find((c: { type: string }) => c.type === 'Failed'),
    `CSR ${name} Failed`,
    30_000,
  );
}

/** The CSR's Events (a cluster-scoped object's go to the default namespace), once `reason` is among them. */
async function eventsOnceThere(name: string, reason: string): Promise<Event[]> {
  return eventually(
    async () => {
      const list = await env.admin.resource(builtins.events).list('default', {
        fieldSelector: `involvedObject.kind=CertificateSigningRequest,involvedObject.name=${name}`,
      });
      const events = list.items as unknown as Event[];
      return events.some((e) => e.reason === reason) ? events : undefined;
    },
    `CSR ${name} event ${reason}`,
    30_000,
  );
}

const pemCertificates = (pem: string) =>
  pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];

function firstCertificate(pem: string): string {
  const [first] = pemCertificates(pem);
  assert.ok(first, `no certificate in ${JSON.stringify(pem)}`);
  return first;
}

describe('CertificateSigningRequest signers for cert-manager.io issuers', { skip }, () => {
  before(async () => {
    env = await startEnvironment({
      controllers: enabledControllers(['*'], { certificateSigningRequestControllers: true }),
      tokens: new Map([[DAVE.token, DAVE.user]]),
    });
    workDir = await mkdtemp(join(tmpdir(), 'certkit-csr-signers-'));
    const kubectlEnv = {
      ...process.env,
      KUBECONFIG: env.server.kubeconfigPath,
      KUBECACHEDIR: join(workDir, 'cache'),
    };
    admin = kubectlFor(kubectlEnv, workDir);
    const k = kubectlFor(kubectlEnv, workDir);
    dave = {
      ...k,
      run: (...args) => k.run('--token', DAVE.token, ...args),
      ok: (...args) => k.ok('--token', DAVE.token, ...args),
    };
    await admin.ok('create', 'namespace', NS);
    // Dave may create and read CSRs, as any cluster user asking for a certificate; nothing else.
    await admin.ok(
      'create',
      'clusterrole',
      'csr-requester',
      '--verb=create,get,list,watch',
      '--resource=certificatesigningrequests',
    );
    await admin.ok(
      'create',
      'clusterrolebinding',
      'csr-requesters',
      '--clusterrole=csr-requester',
      '--group=csr-requesters',
    );
    caClusterIssuer = await prepareIssuer(
      env,
      { title: 'CA ClusterIssuer', kind: 'ClusterIssuer', type: 'CA' },
      NS,
      'csr',
    );
    caIssuer = await prepareIssuer(env, { title: 'CA Issuer', kind: 'Issuer', type: 'CA' }, NS, 'csr');
  });

  after(async () => {
    await env?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('CA ClusterIssuer: waits for approval, then signs for the request-duration, as a CA when request-is-ca', async () => {
    const { csrPem } = keyAndCsr('/CN=intermediate.example.com/O=csr-test');
    await createCsr(admin, 'ca-cluster', {
      signerName: `clusterissuers.cert-manager.io/${caClusterIssuer.issuerRef.name}`,
      csrPem,
      annotations: {
        'experimental.cert-manager.io/request-duration': '2h',
        'experimental.cert-manager.io/request-is-ca': 'true',
      },
      // The annotation wins over expirationSeconds.
      expirationSeconds: 86400,
      usages: ['digital signature', 'cert sign'],
    });
    const waiting = await eventsOnceThere('ca-cluster', 'WaitingApproval');
    // Only the signer of the issuer's type says so (cert-manager's five signers would each say it).
    assert.deepEqual(
      [...new Set(waiting.filter((e) => e.reason === 'WaitingApproval').map((e) => e.source?.component))],
      ['cert-manager-certificatesigningrequests-issuer-ca'],
    );
    assert.ok(!(await getCsr('ca-cluster')).status?.certificate, 'nothing is signed before approval');

    await admin.ok('certificate', 'approve', 'ca-cluster');
    const chain = await issued('ca-cluster');
    const leaf = firstCertificate(chain);
    const text = x509Text(leaf);
    assert.match(text, /CA:TRUE/);
    assert.match(text, /Certificate Sign/);
    assert.match(
      text,
      /Subject: CN ?= ?intermediate\.example\.com, O ?= ?csr-test|Subject: O ?= ?csr-test, CN ?= ?intermediate\.example\.com/,
    );
    assert.equal(lifetimeSeconds(leaf), 2 * 3600);
    const verified = opensslVerify(caClusterIssuer.caPem!, pemCertificates(chain));
    assert.ok(verified.ok, verified.output);
    assert.equal(tableRecords(await admin.ok('get', 'csr', 'ca-cluster'))[0].CONDITION, 'Approved,Issued');
    const events = await eventsOnceThere('ca-cluster', 'CertificateIssued');
    assert.equal(
      events.find((e) => e.reason === 'CertificateIssued')?.message,
      'Certificate signed successfully',
    );
  });

  it('CA Issuer: spec.expirationSeconds sets the lifetime without the annotation; no CA without request-is-ca', async () => {
    const { csrPem } = keyAndCsr('/CN=web.csr-signers.example.com');
    await createCsr(admin, 'ca-namespaced', {
      signerName: `issuers.cert-manager.io/${NS}.${caIssuer.issuerRef.name}`,
      csrPem,
      expirationSeconds: 3600,
      annotations: { 'experimental.cert-manager.io/request-is-ca': 'false' },
    });
    await admin.ok('certificate', 'approve', 'ca-namespaced');
    const chain = await issued('ca-namespaced');
    const leaf = firstCertificate(chain);
    const text = x509Text(leaf);
    assert.match(text, /CA:FALSE/);
    assert.match(text, /TLS Web Server Authentication/);
    assert.equal(lifetimeSeconds(leaf), 3600);
    const verified = opensslVerify(caIssuer.caPem!, pemCertificates(chain));
    assert.ok(verified.ok, verified.output);
  });

  it('SelfSigned ClusterIssuer: signs with the key of the annotated Secret, created after approval', async () => {
    const issuerName = 'csr-selfsigned';
    await env.clusterIssuers.create(undefined, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: issuerName },
      spec: { selfSigned: {} },
    });
    await eventually(
      async () =>
        (await env.clusterIssuers.get(undefined, issuerName)).status?.conditions?.some(
          (c) => c.type === 'Ready' && c.status === 'True',
        ) || undefined,
      'SelfSigned ClusterIssuer Ready',
      30_000,
    );
    const { keyPem, csrPem } = keyAndCsr('/CN=self.example.com');
    await createCsr(admin, 'self-signed', {
      signerName: `clusterissuers.cert-manager.io/${issuerName}`,
      csrPem,
      annotations: {
        'experimental.cert-manager.io/private-key-secret-name': 'self-signed-key',
        'experimental.cert-manager.io/request-duration': '1h30m',
      },
    });
    await admin.ok('certificate', 'approve', 'self-signed');
    const missing = await eventsOnceThere('self-signed', 'SecretNotFound');
    assert.equal(
      missing.find((e) => e.reason === 'SecretNotFound')?.source?.component,
      'cert-manager-certificatesigningrequests-issuer-selfsigned',
    );
    // A ClusterIssuer's Secrets live in the cluster resource namespace; its creation wakes the CSR at once.
    await env.secrets.create(undefined, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'self-signed-key', namespace: 'certkit-conformance-system' },
      data: { 'tls.key': Buffer.from(keyPem).toString('base64') },
    });
    const certificate = await issued('self-signed');
    const leaf = firstCertificate(certificate);
    assert.equal(pemCertificates(certificate).length, 1);
    const text = x509Text(leaf);
    assert.match(text, /Issuer: CN ?= ?self\.example\.com/);
    assert.match(text, /Subject: CN ?= ?self\.example\.com/);
    assert.match(text, /CA:FALSE/);
    assert.equal(lifetimeSeconds(leaf), 5400);
    const verified = opensslVerify(leaf, [leaf]);
    assert.ok(verified.ok, verified.output);
    const events = await eventsOnceThere('self-signed', 'CertificateIssued');
    assert.equal(
      events.find((e) => e.reason === 'CertificateIssued')?.message,
      'Certificate self signed successfully',
    );
  });

  it('SelfSigned without the private key annotation: Failed/MissingAnnotation', async () => {
    const { csrPem } = keyAndCsr('/CN=nokey.example.com');
    await createCsr(admin, 'self-signed-nokey', {
      signerName: 'clusterissuers.cert-manager.io/csr-selfsigned',
      csrPem,
    });
    await admin.ok('certificate', 'approve', 'self-signed-nokey');
    const failed = await failedCondition('self-signed-nokey');
    assert.equal(failed.reason, 'MissingAnnotation');
    assert.equal(
      failed.message,
      'Missing private key reference annotation: "experimental.cert-manager.io/private-key-secret-name"',
    );
  });

  it('a requester without reference on a namespaced Issuer: Failed/DeniedReference; with it, signed', async () => {
    const { csrPem } = keyAndCsr('/CN=dave.example.com');
    const signerName = `issuers.cert-manager.io/${NS}.${caIssuer.issuerRef.name}`;
    await createCsr(dave, 'dave-denied', { signerName, csrPem });
    assert.equal((await getCsr('dave-denied')).spec.username, 'dave');
    await admin.ok('certificate', 'approve', 'dave-denied');
    const failed = await failedCondition('dave-denied');
    assert.equal(failed.reason, 'DeniedReference');
    assert.equal(
      failed.message,
      `Requester may not reference Namespaced Issuer ${NS}/${caIssuer.issuerRef.name}`,
    );
    assert.ok(!(await getCsr('dave-denied')).status.certificate);
    assert.equal(tableRecords(await admin.ok('get', 'csr', 'dave-denied'))[0].CONDITION, 'Approved,Failed');
    await eventsOnceThere('dave-denied', 'DeniedReference');

    // cert-manager's documented grant: reference on signers of cert-manager.io, named after the Issuer.
    await admin.ok(
      'apply',
      '-f',
      await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reference-ca, namespace: ${NS}}
rules:
  - {apiGroups: [cert-manager.io], resources: [signers], verbs: [reference], resourceNames: [${caIssuer.issuerRef.name}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dave-reference-ca, namespace: ${NS}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reference-ca}
subjects: [{kind: User, name: dave, apiGroup: rbac.authorization.k8s.io}]
`),
    );
    const review = await admin.manifest(`apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: dave
  groups: [csr-requesters]
  resourceAttributes: {group: cert-manager.io, resource: signers, verb: reference, namespace: ${NS}, name: ${caIssuer.issuerRef.name}}
`);
    await eventually(
      async () =>
        JSON.parse(await admin.ok('create', '-f', review, '-o', 'json')).status.allowed || undefined,
      'dave may reference the Issuer',
      15_000,
    );
    await createCsr(dave, 'dave-allowed', { signerName, csrPem });
    await admin.ok('certificate', 'approve', 'dave-allowed');
    const verified = opensslVerify(caIssuer.caPem!, pemCertificates(await issued('dave-allowed')));
    assert.ok(verified.ok, verified.output);
  });

  it('a duration under 600 s: Failed/InvalidDuration, in cert-manager’s words', async () => {
    const { csrPem } = keyAndCsr('/CN=short.example.com');
    await createCsr(admin, 'too-short', {
      signerName: `clusterissuers.cert-manager.io/${caClusterIssuer.issuerRef.name}`,
      csrPem,
      annotations: { 'experimental.cert-manager.io/request-duration': '5m' },
    });
    await admin.ok('certificate', 'approve', 'too-short');
    const failed = await failedCondition('too-short');
    assert.equal(failed.reason, 'InvalidDuration');
    assert.equal(
      failed.message,
      'CertificateSigningRequest minimum allowed duration is 10m0s, requested 5m0s',
    );
  });

  it('an issuer that does not exist yet: IssuerNotFound, once, then signed when it appears', async () => {
    const { csrPem } = keyAndCsr('/CN=late.example.com');
    await createCsr(admin, 'late-issuer', {
      signerName: 'clusterissuers.cert-manager.io/csr-late-ca',
      csrPem,
    });
    await admin.ok('certificate', 'approve', 'late-issuer');
    const events = await eventsOnceThere('late-issuer', 'IssuerNotFound');
    const notFound = events.filter((e) => e.reason === 'IssuerNotFound');
    assert.equal(notFound.length, 1, 'one signer speaks for it');
    assert.equal(notFound[0].message, 'Referenced ClusterIssuer /csr-late-ca not found');
    // The CA of the CA ClusterIssuer above, under another name: its creation wakes the CSR.
    await env.clusterIssuers.create(undefined, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'csr-late-ca' },
      spec: { ca: { secretName: `${caClusterIssuer.issuerRef.name}-key-pair` } },
    });
    const verified = opensslVerify(caClusterIssuer.caPem!, pemCertificates(await issued('late-issuer')));
    assert.ok(verified.ok, verified.output);
  });

  it('leaves alone CSRs for other signers, and denied ones', async () => {
    const { csrPem } = keyAndCsr('/CN=other.example.com');
    await createCsr(admin, 'other-signer', { signerName: 'example.com/team-ca', csrPem });
    await admin.ok('certificate', 'approve', 'other-signer');
    await createCsr(admin, 'denied', {
      signerName: `clusterissuers.cert-manager.io/${caClusterIssuer.issuerRef.name}`,
      csrPem,
    });
    await admin.ok('certificate', 'deny', 'denied');
    // A CSR signed after these shows the controller has looked at them.
    await createCsr(admin, 'after', {
      signerName: `clusterissuers.cert-manager.io/${caClusterIssuer.issuerRef.name}`,
      csrPem,
    });
    await admin.ok('certificate', 'approve', 'after');
    await issued('after');
    for (const name of ['other-signer', 'denied']) {
      const csr = await getCsr(name);
      assert.ok(!csr.status.certificate, name);
      assert.ok(!csr.status.conditions.some((c: { type: string }) => c.type === 'Failed'), name);
    }
  });

  it('was refused nothing under deploy/rbac.yaml (sign on the signers, SubjectAccessReviews, CSR status)', () => {
    assert.deepEqual(env.forbidden, []);
  });
});
