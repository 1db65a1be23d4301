/**
 * The Certificate controllers end to end against the real embedded API server, with the issuer and
 * CertificateRequest controllers (approver, SelfSigned signer) running beside them as in a deployment: a
 * Certificate becomes Ready with a matching key pair in its Secret, renews when its renewal time passes,
 * re-issues when its spec changes, follows its cleanup policy without re-issuing, and with OnDelete loses
 * its Secret to the API server's garbage collector when deleted.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isNotFound, type KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  type Controller,
  jsonLogger,
  KubeClient,
  loadKubeconfig,
  type RequestInfo,
  type ResourceClient,
  silentLogger,
} from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { certManagerCrds } from '../../api/crds.ts';
import type { Certificate, CertificateRequest, CertificateSpec, Issuer } from '../../api/types.ts';
import {
  encodePrivateKey,
  generatePrivateKey,
  parseCertificate,
  parsePrivateKey,
  publicKeysEqual,
} from '../../pki/index.ts';
import { registerCertificateRequestControllers } from '../certificaterequests/index.ts';
import type { ControllerContext } from '../context.ts';
import { createControllerContext, startContext } from '../create-context.ts';
import { registerIssuerControllers } from '../issuers/index.ts';
import { certificateRequestsRef, certificatesRef, issuersRef } from '../refs.ts';
import { isStrippedSecret } from '../secret-facts.ts';
import { registerCertificateControllers } from './index.ts';
import { SECRET_TEMPLATE_KEYS_ANNOTATION } from './issuing/secret.ts';

const ns = 'apps';
const FAO = 'controller.cert-manager.io/fao';

let server: TestServer;
let admin: KubeClient;
let client: KubeClient;
let ctx: ControllerContext;
let controllers: Controller[];
const abort = new AbortController();
const running: Promise<void>[] = [];
/** Every request the controllers' client made, in order. */
const requests: RequestInfo[] = [];

let certs: ResourceClient<Certificate>;
let crs: ResourceClient<CertificateRequest>;
let secrets: ResourceClient<Secret & KubeObject>;

async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const decode = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString();
const condition = (cert: Certificate, type: string) => cert.status?.conditions?.find((c) => c.type === type);

/** The Certificate once Ready=True for its current generation, with no issuance in progress. */
function readyAndIssued(name: string, minRevision = 1): Promise<Certificate> {
  return eventually(async () => {
    const cert = await certs.get(ns, name);
    const ready = condition(cert, 'Ready');
    const done =
      ready?.status === 'True' &&
      ready.observedGeneration === cert.metadata.generation &&
      !condition(cert, 'Issuing') &&
      (cert.status?.revision ?? 0) >= minRevision;
    return done ? cert : undefined;
  }, `${name} Ready at revision ${minRevision}`);
}

async function getSecret(name: string): Promise<(Secret & KubeObject) | undefined> {
  try {
    return await secrets.get(ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function createCertificate(name: string, spec: Partial<CertificateSpec>): Promise<Certificate> {
  return certs.create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: ns },
    spec: { secretName: `${name}-tls`, issuerRef: { name: 'selfsigned' }, ...spec },
  });
}

async function patchSpec(name: string, spec: Record<string, unknown>): Promise<Certificate> {
  return certs.patch(ns, name, 'merge', { spec });
}

/** Reconciles a Certificate in every controller now (what a restart with other flags would do). */
function reconcileAll(name: string) {
  for (const c of controllers) c.enqueue({ namespace: ns, name });
}

const ownerRefsTo = (secret: Secret | undefined, cert: Certificate) =>
  (secret?.metadata?.ownerReferences ?? []).filter((r) => r.uid === cert.metadata.uid);

before(async () => {
  server = await startTestServer();
  const config = await loadKubeconfig({ path: server.kubeconfigPath });
  admin = new KubeClient({ ...config, qps: -1 });
  for (const crd of certManagerCrds()) {
    await admin.resource(builtins.customResourceDefinitions).create(undefined, crd as unknown as KubeObject);
  }
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef]) {
    const path = `/apis/${ref.group}/${ref.version}/${ref.resource}`;
    await eventually(
      async () => ((await server.fetch('GET', path)).status === 200 ? true : undefined),
      `${ref.resource} served`,
    );
  }
  await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
  certs = admin.resource<Certificate>(certificatesRef);
  crs = admin.resource<CertificateRequest>(certificateRequestsRef);
  secrets = admin.resource<Secret & KubeObject>(builtins.secrets);

  client = new KubeClient({ ...config, qps: -1, onRequest: (info) => requests.push(info) });
  ctx = createControllerContext(client, {
    log: process.env.CERTKIT_TEST_LOG ? jsonLogger('debug') : silentLogger,
  });
  controllers = registerCertificateControllers(ctx);
  const others = [...registerIssuerControllers(ctx), ...registerCertificateRequestControllers(ctx)];
  await startContext(ctx, AbortSignal.any([abort.signal, AbortSignal.timeout(15_000)]));
  for (const c of [...controllers, ...others]) running.push(c.start(abort.signal));

  await admin.resource<Issuer>(issuersRef).create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'selfsigned', namespace: ns },
    spec: { selfSigned: {} },
  });
});

after(async () => {
  abort.abort();
  await Promise.all(running);
  await ctx?.factory.stopped();
  client?.close();
  admin?.close();
  await server?.close();
});

describe('Certificate controllers on the embedded API server', () => {
  it('issues a SelfSigned Certificate: Ready, a matching key pair, labels, annotations and status', async () => {
    await createCertificate('web', { commonName: 'web', dnsNames: ['web.example'], revisionHistoryLimit: 1 });
    const cert = await readyAndIssued('web');

    const secret = (await getSecret('web-tls'))!;
    assert.equal(secret.type, 'kubernetes.io/tls');
    const key = parsePrivateKey(decode(secret.data?.['tls.key']));
    const x509 = parseCertificate(decode(secret.data?.['tls.crt']));
    assert.ok(publicKeysEqual(x509.publicKey, key), 'tls.key matches tls.crt');
    assert.equal(key.asymmetricKeyType, 'rsa');
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    // Default encoding PKCS1.
    assert.match(decode(secret.data?.['tls.key']), /^-----BEGIN RSA PRIVATE KEY-----/);
    assert.deepEqual(x509.dnsNames, ['web.example']);
    assert.equal(
      decode(secret.data?.['ca.crt']),
      decode(secret.data?.['tls.crt']),
      'SelfSigned: the CA is the certificate',
    );

    assert.equal(secret.metadata?.labels?.[FAO], 'true');
    const annotations = secret.metadata?.annotations ?? {};
    assert.equal(annotations['cert-manager.io/certificate-name'], 'web');
    assert.equal(annotations['cert-manager.io/issuer-name'], 'selfsigned');
    assert.equal(annotations['cert-manager.io/common-name'], 'web');
    assert.equal(annotations['cert-manager.io/alt-names'], 'web.example');
    assert.equal(annotations['cert-manager.io/ip-sans'], '');
    assert.equal(ownerRefsTo(secret, cert).length, 0, 'default cleanup policy Never: no owner reference');

    assert.equal(cert.status?.revision, 1);
    assert.equal(cert.status?.notBefore, `${x509.notBefore.toISOString().slice(0, 19)}Z`);
    assert.equal(cert.status?.notAfter, `${x509.notAfter.toISOString().slice(0, 19)}Z`);
    const lifetime = x509.notAfter.getTime() - x509.notBefore.getTime();
    const renewal = Math.floor((x509.notAfter.getTime() - lifetime / 3) / 1000) * 1000;
    assert.equal(cert.status?.renewalTime, `${new Date(renewal).toISOString().slice(0, 19)}Z`);
    assert.equal(cert.status?.nextPrivateKeySecretName, undefined);
    assert.deepEqual(
      { ...condition(cert, 'Ready'), lastTransitionTime: undefined },
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: 'Certificate is up to date and has not expired',
        observedGeneration: cert.metadata.generation,
        lastTransitionTime: undefined,
      },
    );

    const request = await crs.get(ns, 'web-1');
    assert.equal(request.metadata.annotations?.['cert-manager.io/certificate-name'], 'web');
    assert.equal(request.metadata.annotations?.['cert-manager.io/certificate-revision'], '1');
    assert.ok(request.metadata.annotations?.['cert-manager.io/private-key-secret-name']?.startsWith('web-'));
    assert.deepEqual(
      request.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
      [['Certificate', 'web', true]],
    );
    assert.deepEqual(request.spec.issuerRef, { name: 'selfsigned' });

    // The temporary next-key Secret is gone once issuance is over.
    await eventually(async () => {
      const left = await secrets.list(ns, { labelSelector: 'cert-manager.io/next-private-key=true' });
      return left.items.length === 0 ? true : undefined;
    }, 'next-key Secrets deleted');
  });

  // Five as in cert-manager, where only readiness writes Ready (docs/adr/0902): the trigger (Issuing=True),
  // readiness (Ready=False, no Secret yet), the key manager (the next key's name), issuing (the new
  // revision), readiness (Ready=True and the validity dates).
  it('writes a new Certificate status five times per issuance: Ready by readiness alone', async () => {
    const from = requests.length;
    await createCertificate('three-writes', { commonName: 'three-writes.example' });
    await readyAndIssued('three-writes');
    // Readiness finds nothing to change afterwards: give it the moment it needs to prove that.
    await sleep(300);
    const statusWrites = requests
      .slice(from)
      .filter((r) => r.verb === 'update' && r.resource === 'certificates.cert-manager.io' && r.code === 200);
    assert.equal(statusWrites.length, 5);
  });

  it('issues a burst once each, though the issuing controller no longer waits for the Secret cache', async () => {
    // The issuing controller writes the status right after the Secret, without waiting for its cache; the
    // trigger and readiness must not judge the new revision by the Secret as it was (docs/adr/1181). A burst
    // keeps the five workers busy, so watch events and reconciles interleave every way they can.
    const N = 24;
    const names = Array.from({ length: N }, (_, i) => `burst-${i}`);
    const from = requests.length;
    await Promise.all(
      names.map((name) => createCertificate(name, { commonName: name, privateKey: { algorithm: 'ECDSA' } })),
    );
    for (const name of names) {
      const cert = await readyAndIssued(name);
      assert.equal(cert.status?.revision, 1, `${name} issued once`);
    }
    await sleep(300);
    const made = requests.slice(from);
    const count = (verb: string, resource: string, code: number) =>
      made.filter((r) => r.verb === verb && r.resource === resource && r.code === code).length;
    assert.equal(count('create', 'certificaterequests.cert-manager.io', 201), N, 'one request each');
    // The next key's Secret and the issued one, each created once; the issued one never rewritten.
    assert.equal(count('create', 'secrets', 201), 2 * N);
    assert.equal(count('update', 'secrets', 200), 0);
    assert.equal(count('update', 'certificates.cert-manager.io', 200), 5 * N, 'five status writes each');
    for (const name of names) {
      const crNames = (await crs.list(ns)).items
        .map((r) => r.metadata.name)
        .filter((n) => n?.startsWith(`${name}-`));
      assert.deepEqual(crNames, [`${name}-1`]);
    }
    const issuedEvents = (await admin.resource(builtins.events).list(ns)).items as unknown as {
      involvedObject: { name: string };
      reason: string;
      message: string;
      count?: number;
    }[];
    for (const name of names) {
      const issued = issuedEvents.filter(
        (e) =>
          e.involvedObject.name === name &&
          e.reason === 'Issuing' &&
          e.message === 'The certificate has been successfully issued',
      );
      assert.deepEqual(
        issued.map((e) => e.count ?? 1),
        [1],
        `${name}: one Issuing event`,
      );
    }
    await Promise.all(names.map((name) => certs.delete(ns, name)));
  });

  it('re-issues when dnsNames change, and keeps one request (revisionHistoryLimit 1)', async () => {
    const before = await certs.get(ns, 'web');
    const oldKey = decode((await getSecret('web-tls'))!.data?.['tls.key']);
    await patchSpec('web', { dnsNames: ['web.example', 'www.web.example'] });
    const cert = await readyAndIssued('web', 2);
    assert.equal(cert.status?.revision, (before.status?.revision ?? 0) + 1);
    const secret = (await getSecret('web-tls'))!;
    const x509 = parseCertificate(decode(secret.data?.['tls.crt']));
    assert.deepEqual([...x509.dnsNames].sort(), ['web.example', 'www.web.example']);
    assert.notEqual(decode(secret.data?.['tls.key']), oldKey, 'rotationPolicy Always: a new key');
    assert.equal(secret.metadata?.annotations?.['cert-manager.io/alt-names'], 'web.example,www.web.example');
    await eventually(async () => {
      const names = (await crs.list(ns)).items
        .map((r) => r.metadata.name)
        .filter((n) => n?.startsWith('web-'));
      return names.length === 1 && names[0] === 'web-2' ? true : undefined;
    }, 'only web-2 left');
  });

  it('adds and removes the owner reference as cleanupPolicy and the flags change, without re-issuing', async () => {
    const cert = await certs.get(ns, 'web');
    const revision = cert.status?.revision;
    const tlsCrt = (await getSecret('web-tls'))!.data?.['tls.crt'];
    const ownerRefs = async () => ownerRefsTo(await getSecret('web-tls'), cert);
    const waitOwnerRefs = (count: number, what: string) =>
      eventually(async () => ((await ownerRefs()).length === count ? true : undefined), what);

    await patchSpec('web', { cleanupPolicy: 'OnDelete' });
    await waitOwnerRefs(1, 'owner reference added (field OnDelete)');
    assert.deepEqual(await ownerRefs(), [
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        name: 'web',
        uid: cert.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await patchSpec('web', { cleanupPolicy: 'Never' });
    await waitOwnerRefs(0, 'owner reference removed (field Never)');

    // The deprecated flag wins over the field, both ways.
    ctx.options.enableCertificateOwnerRef = true;
    reconcileAll('web');
    await waitOwnerRefs(1, 'owner reference added (flag true over field Never)');
    await patchSpec('web', { cleanupPolicy: 'OnDelete' });
    ctx.options.enableCertificateOwnerRef = false;
    reconcileAll('web');
    await waitOwnerRefs(0, 'owner reference removed (flag false over field OnDelete)');
    delete ctx.options.enableCertificateOwnerRef;
    reconcileAll('web');
    await waitOwnerRefs(1, 'owner reference back (field OnDelete, no flag)');

    // The default policy applies to an empty field.
    await patchSpec('web', { cleanupPolicy: null });
    await waitOwnerRefs(0, 'owner reference removed (default Never)');
    ctx.options.defaultSecretCleanupPolicy = 'OnDelete';
    reconcileAll('web');
    await waitOwnerRefs(1, 'owner reference added (default OnDelete)');
    ctx.options.defaultSecretCleanupPolicy = 'Never';
    reconcileAll('web');
    await waitOwnerRefs(0, 'owner reference removed (default Never again)');

    await sleep(300);
    const after = await readyAndIssued('web');
    assert.equal(after.status?.revision, revision, 'no re-issuance');
    assert.equal((await getSecret('web-tls'))!.data?.['tls.crt'], tlsCrt, 'same certificate');
  });

  it('keeps secretTemplate and the fao label on the Secret without re-issuing', async () => {
    const revision = (await certs.get(ns, 'web')).status?.revision;
    await patchSpec('web', {
      secretTemplate: { labels: { team: 'a' }, annotations: { 'example.com/owner': 'a' } },
    });
    const labelled = await eventually(async () => {
      const secret = await getSecret('web-tls');
      return secret?.metadata?.labels?.team === 'a' ? secret : undefined;
    }, 'template label');
    assert.equal(labelled.metadata?.annotations?.['example.com/owner'], 'a');
    assert.ok(labelled.metadata?.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION]);

    // Someone strips the fao label and adds a label of their own; the template loses its annotation.
    const edited = structuredClone(labelled);
    delete edited.metadata!.labels![FAO];
    edited.metadata!.labels!.mine = 'yes';
    await secrets.update(edited);
    await patchSpec('web', { secretTemplate: { labels: { team: 'a' }, annotations: null } });
    const repaired = await eventually(async () => {
      const secret = await getSecret('web-tls');
      const ok =
        secret?.metadata?.labels?.[FAO] === 'true' &&
        secret.metadata.annotations?.['example.com/owner'] === undefined;
      return ok ? secret : undefined;
    }, 'fao label back, template annotation removed');
    assert.equal(repaired.metadata?.labels?.mine, 'yes', 'foreign labels are kept');
    assert.equal(repaired.metadata?.labels?.team, 'a');
    assert.equal((await readyAndIssued('web')).status?.revision, revision, 'no re-issuance');
  });

  it('takes over a Secret cert-manager applied: no re-issuance, no write, its template keys still cleaned up', async () => {
    // A Certificate's Secret as cert-manager leaves it: server-side applied by its issuing controller's field
    // manager, with its annotations and the secretTemplate's keys, and no certkit bookkeeping. The key pair is
    // borrowed from a Certificate issued here first.
    await createCertificate('source', { commonName: 'moved', dnsNames: ['moved.example'] });
    await readyAndIssued('source');
    const source = (await getSecret('source-tls'))!;
    const applied = await server.fetch(
      'PATCH',
      `/api/v1/namespaces/${ns}/secrets/moved-tls?fieldManager=cert-manager-certificates-issuing&force=true`,
      {
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: {
            name: 'moved-tls',
            namespace: ns,
            labels: { [FAO]: 'true', team: 'a', tier: 'web' },
            annotations: {
              'cert-manager.io/alt-names': 'moved.example',
              'cert-manager.io/certificate-name': 'moved',
              'cert-manager.io/common-name': 'moved',
              'cert-manager.io/ip-sans': '',
              'cert-manager.io/uri-sans': '',
              'cert-manager.io/issuer-group': '',
              'cert-manager.io/issuer-kind': 'Issuer',
              'cert-manager.io/issuer-name': 'selfsigned',
              'example.com/owner': 'x',
            },
          },
          data: source.data,
        },
      },
    );
    assert.equal(applied.status, 201, applied.text);
    // Someone else's label, which certkit must never remove.
    await secrets.patch(ns, 'moved-tls', 'merge', { metadata: { labels: { mine: 'yes' } } });
    const before = (await getSecret('moved-tls'))!;
    assert.equal(before.metadata?.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION], undefined);

    await createCertificate('moved', {
      commonName: 'moved',
      dnsNames: ['moved.example'],
      secretTemplate: { labels: { team: 'a', tier: 'web' }, annotations: { 'example.com/owner': 'x' } },
    });
    const cert = await eventually(async () => {
      const c = await certs.get(ns, 'moved');
      return condition(c, 'Ready')?.status === 'True' ? c : undefined;
    }, 'moved Ready');
    assert.equal(cert.status?.revision, undefined, 'not issued again');
    // The template as cert-manager applied it is what the Secret has: nothing to write.
    await sleep(500);
    assert.equal((await getSecret('moved-tls'))!.metadata?.resourceVersion, before.metadata?.resourceVersion);

    // The template loses a label and its annotation: the keys cert-manager's apply owned go, as they would
    // under cert-manager; the foreign label stays.
    await patchSpec('moved', { secretTemplate: { labels: { tier: null }, annotations: null } });
    const cleaned = await eventually(async () => {
      const secret = await getSecret('moved-tls');
      const labels = secret?.metadata?.labels ?? {};
      return labels.tier === undefined && secret?.metadata?.annotations?.['example.com/owner'] === undefined
        ? secret
        : undefined;
    }, 'dropped template keys removed');
    assert.equal(cleaned.metadata?.labels?.team, 'a');
    assert.equal(cleaned.metadata?.labels?.mine, 'yes', 'foreign labels are kept');
    assert.equal(cleaned.data?.['tls.crt'], source.data?.['tls.crt'], 'the same certificate');
    assert.deepEqual(
      (await crs.list(ns)).items.filter(
        (r) => r.metadata?.annotations?.['cert-manager.io/certificate-name'] === 'moved',
      ),
      [],
      'no CertificateRequest for it',
    );
  });

  it('renews when the renewal time passes', async () => {
    // Lifetime 1h, renew 59m55s before expiry: renewal is due 5 s after issuance.
    await createCertificate('short', {
      dnsNames: ['short.example'],
      duration: '1h',
      renewBefore: '59m55s',
      privateKey: { algorithm: 'ECDSA' },
    });
    const first = await readyAndIssued('short');
    const renewsAt = Date.parse(first.status!.renewalTime!);
    assert.equal(renewsAt, Date.parse(first.status!.notBefore!) + 5000);
    const renewed = await readyAndIssued('short', 2);
    assert.ok(Date.now() >= renewsAt, 'not before the renewal time');
    assert.ok(Date.parse(renewed.status!.notBefore!) >= renewsAt - 1000, 'a new certificate');
    await certs.delete(ns, 'short');
  });

  it('does not issue an invalid Certificate, reporting Ready=False with an event', async () => {
    await createCertificate('invalid', { dnsNames: [] });
    const cert = await eventually(async () => {
      const c = await certs.get(ns, 'invalid');
      return condition(c, 'Ready')?.reason === 'InvalidSpec' ? c : undefined;
    }, 'Ready=False InvalidSpec');
    assert.equal(condition(cert, 'Ready')?.status, 'False');
    assert.equal(condition(cert, 'Issuing'), undefined);
    const events = await eventually(async () => {
      const list = await admin.resource(builtins.events).list(ns);
      const found = (
        list.items as unknown as { involvedObject: { name: string }; reason: string; type: string }[]
      ).filter((e) => e.involvedObject.name === 'invalid' && e.reason === 'InvalidSpec');
      return found.length ? found : undefined;
    }, 'InvalidSpec event');
    assert.equal(events[0].type, 'Warning');
    await sleep(300);
    const requests = (await crs.list(ns)).items.filter((r) => r.metadata.name?.startsWith('invalid-'));
    assert.equal(requests.length, 0);
  });

  it('fails an issuance with backoff when the request fails, and retries at once when the spec is fixed', async () => {
    // An external issuer no in-tree signer handles: the test plays it and fails the request.
    await createCertificate('ext', {
      dnsNames: ['ext.example'],
      privateKey: { algorithm: 'ECDSA' },
      issuerRef: { name: 'ext', kind: 'ExtIssuer', group: 'example.com' },
    });
    await eventually(async () => {
      try {
        const cr = await crs.get(ns, 'ext-1');
        const failed = {
          ...cr,
          status: {
            ...cr.status,
            failureTime: `${new Date().toISOString().slice(0, 19)}Z`,
            conditions: [
              ...(cr.status?.conditions ?? []).filter((c) => c.type !== 'Ready'),
              { type: 'Ready', status: 'False' as const, reason: 'Failed', message: 'the CA said no' },
            ],
          },
        };
        await crs.update(failed, { subresource: 'status' });
        return true;
      } catch (err) {
        if (isNotFound(err) || (err as { status?: { code?: number } }).status?.code === 409) return undefined;
        throw err;
      }
    }, 'ext-1 failed');

    const failed = await eventually(async () => {
      const c = await certs.get(ns, 'ext');
      return condition(c, 'Issuing')?.status === 'False' ? c : undefined;
    }, 'Issuing=False');
    assert.equal(condition(failed, 'Issuing')?.reason, 'Failed');
    assert.equal(
      condition(failed, 'Issuing')?.message,
      'The certificate request has failed to complete and will be retried: the CA said no',
    );
    assert.equal(failed.status?.failedIssuanceAttempts, 1);
    assert.ok(failed.status?.lastFailureTime);
    // Backing off: no new attempt for the same spec.
    await sleep(500);
    assert.equal(condition(await certs.get(ns, 'ext'), 'Issuing')?.status, 'False');

    // A fixed spec no longer matches the failed request: no backoff.
    await patchSpec('ext', { issuerRef: { name: 'selfsigned', kind: null, group: null } });
    const issued = await readyAndIssued('ext');
    assert.equal(issued.status?.revision, 1);
    assert.equal(issued.status?.failedIssuanceAttempts, undefined);
    assert.equal(issued.status?.lastFailureTime, undefined);
    assert.deepEqual((await crs.get(ns, 'ext-1')).spec.issuerRef, { name: 'selfsigned' });
    await certs.delete(ns, 'ext');
  });

  it('lets only one of two Certificates sharing a secretName issue', async () => {
    const spec = { secretName: 'shared-tls', privateKey: { algorithm: 'ECDSA' as const } };
    await createCertificate('dup-a', { ...spec, dnsNames: ['a.example'] });
    await readyAndIssued('dup-a');
    await createCertificate('dup-b', { ...spec, dnsNames: ['b.example'] });
    const b = await eventually(async () => {
      const c = await certs.get(ns, 'dup-b');
      return condition(c, 'Ready')?.status === 'False' ? c : undefined;
    }, 'dup-b not Ready');
    assert.equal(condition(b, 'Ready')?.reason, 'IncorrectCertificate');
    await sleep(500);
    const owned = (await crs.list(ns)).items.filter((r) => r.metadata.ownerReferences?.[0]?.name === 'dup-b');
    assert.equal(owned.length, 0, 'dup-b made no request');
    assert.equal(condition(await certs.get(ns, 'dup-b'), 'Issuing'), undefined);
    const secret = (await getSecret('shared-tls'))!;
    assert.equal(secret.metadata?.annotations?.['cert-manager.io/certificate-name'], 'dup-a');
    await certs.delete(ns, 'dup-a');
    await certs.delete(ns, 'dup-b');
  });

  it('with cleanupPolicy OnDelete, deleting the Certificate deletes its Secret (API server GC)', async () => {
    await patchSpec('web', { cleanupPolicy: 'OnDelete' });
    const cert = await certs.get(ns, 'web');
    await eventually(
      async () => (ownerRefsTo(await getSecret('web-tls'), cert).length === 1 ? true : undefined),
      'owner reference',
    );
    await certs.delete(ns, 'web');
    await eventually(
      async () => ((await getSecret('web-tls')) === undefined ? true : undefined),
      'Secret deleted by GC',
    );
    await eventually(async () => {
      const left = (await crs.list(ns)).items.filter((r) => r.metadata.name?.startsWith('web-'));
      return left.length === 0 ? true : undefined;
    }, 'CertificateRequests deleted by GC');
  });

  it('with cleanupPolicy Never, the Secret outlives its Certificate', async () => {
    await createCertificate('kept', {
      dnsNames: ['kept.example'],
      cleanupPolicy: 'Never',
      privateKey: { algorithm: 'ECDSA' },
    });
    await readyAndIssued('kept');
    await certs.delete(ns, 'kept');
    await eventually(async () => {
      try {
        await certs.get(ns, 'kept');
        return undefined;
      } catch (err) {
        return isNotFound(err) ? true : undefined;
      }
    }, 'Certificate gone');
    await sleep(500);
    assert.ok(await getSecret('kept-tls'), 'the Secret stays');
  });

  it('notices a Secret cached as facts being edited behind its back, and repairs it', async () => {
    await createCertificate('facts', { dnsNames: ['facts.example'], privateKey: { algorithm: 'ECDSA' } });
    const { status } = await readyAndIssued('facts');
    const revision = status!.revision!;
    assert.ok(isStrippedSecret(await ctx.secrets.get(ns, 'facts-tls')), 'cached as facts (docs/adr/1140)');
    // Judged by its facts: every sub-controller looks at it again without reading a Secret live.
    const from = requests.length;
    reconcileAll('facts');
    await sleep(500);
    assert.deepEqual(
      requests.slice(from).filter((r) => r.resource === 'secrets'),
      [],
      'no Secret read or written',
    );
    const keyMatchesCertificate = (secret: Secret | undefined) =>
      publicKeysEqual(
        parsePrivateKey(decode(secret?.data?.['tls.key'])),
        parseCertificate(decode(secret?.data?.['tls.crt'])).publicKey,
      );

    // An annotation removed: put back from the certificate's facts, without re-issuing.
    const edited = structuredClone(await getSecret('facts-tls'))!;
    delete edited.metadata!.annotations!['cert-manager.io/alt-names'];
    await secrets.update(edited);
    await eventually(async () => {
      const secret = await getSecret('facts-tls');
      return secret?.metadata?.annotations?.['cert-manager.io/alt-names'] === 'facts.example'
        ? true
        : undefined;
    }, 'alt-names annotation back');
    assert.equal((await readyAndIssued('facts')).status?.revision, revision, 'no re-issuance');

    // Another key: the key pair no longer matches, so a new certificate is issued with a key that does.
    const wrongKey = structuredClone(await getSecret('facts-tls'))!;
    const other = encodePrivateKey(await generatePrivateKey({ algorithm: 'ECDSA' }), 'PKCS1');
    wrongKey.data!['tls.key'] = Buffer.from(other).toString('base64');
    await secrets.update(wrongKey);
    await readyAndIssued('facts', revision + 1);
    const reissued = await getSecret('facts-tls');
    assert.ok(keyMatchesCertificate(reissued), 'a matching key pair again');
    assert.notEqual(decode(reissued?.data?.['tls.key']), other);

    // A certificate that is not one: re-issued too.
    const badCert = structuredClone(reissued)!;
    badCert.data!['tls.crt'] = Buffer.from('not a certificate').toString('base64');
    await secrets.update(badCert);
    await readyAndIssued('facts', revision + 2);
    assert.ok(keyMatchesCertificate(await getSecret('facts-tls')), 'a matching key pair again');
  });
});
