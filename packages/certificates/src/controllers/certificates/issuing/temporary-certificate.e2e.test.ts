/**
 * The temporary certificate end to end: the whole controller on the embedded API server, a CA Issuer whose
 * key pair Secret does not exist yet (so the CertificateRequest stays pending), and a Certificate annotated
 * cert-manager.io/issue-temporary-certificate. Its Secret gets the next private key with a certificate from
 * a throwaway CA at once; the real certificate, for the same key, replaces it when the CA Secret appears.
 */

import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { Event, Secret } from 'kubernetes-types/core/v1.d.ts';
import { encodePrivateKey } from '../../../pki/index.ts';
import { rootCa } from '@certkit/testenv/pki/ca';
import {
  type Environment,
  eventually,
  getSecret,
  readyAndDoneIssuing,
  startEnvironment,
} from '@certkit/testenv/conformance/environment';

const ns = 'temporary';
let env: Environment;

const bytes = (secret: Secret | undefined, key: string) => Buffer.from(secret?.data?.[key] ?? '', 'base64');
const pkcs8 = (pem: Buffer) => createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });

async function createCertificate(name: string, annotations?: Record<string, string>): Promise<void> {
  await env.certificates.create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
    spec: {
      secretName: `${name}-tls`,
      commonName: `${name}.example.com`,
      dnsNames: [`${name}.example.com`],
      issuerRef: { name: 'waiting-ca' },
    },
  });
}

before(async () => {
  env = await startEnvironment();
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
  // Its key pair Secret comes later: until then requests for it stay pending.
  await env.issuers.create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'waiting-ca', namespace: ns },
    spec: { ca: { secretName: 'waiting-ca-key-pair' } },
  });
});

after(async () => {
  await env?.close();
});

describe('the temporary certificate on the embedded API server', () => {
  it('writes a throwaway-CA certificate for the next key while the request waits, then the real one for the same key', async () => {
    await createCertificate('plain');
    await createCertificate('temp', { 'cert-manager.io/issue-temporary-certificate': 'true' });

    const temporary = await eventually(
      async () => {
        const secret = await getSecret(env, ns, 'temp-tls');
        return secret?.data?.['tls.crt'] ? secret : undefined;
      },
      'a temporary certificate in temp-tls',
      30_000,
    );
    const x509 = new X509Certificate(bytes(temporary, 'tls.crt'));
    assert.equal(x509.issuer, 'CN=cert-manager.local');
    assert.match(x509.subject, /^CN=temp\.example\.com$/m);
    assert.match(x509.subject, /^serialNumber=1234567890$/m);
    assert.equal(x509.subjectAltName, 'DNS:temp.example.com');
    assert.ok(x509.checkPrivateKey(createPrivateKey(bytes(temporary, 'tls.key'))), 'tls.key matches tls.crt');
    assert.equal(temporary.data?.['ca.crt'], undefined, 'no CA: the throwaway one is gone');

    const cert = await env.certificates.get(ns, 'temp');
    assert.ok(!readyAndDoneIssuing(cert), 'a temporary certificate is not Ready');
    const nextKeySecret = await getSecret(env, ns, cert.status!.nextPrivateKeySecretName!);
    assert.deepEqual(
      pkcs8(bytes(temporary, 'tls.key')),
      pkcs8(bytes(nextKeySecret, 'tls.key')),
      'the next key',
    );
    const events = env.admin.resource<Event & KubeObject>(builtins.events);
    // Events are sent after the Secret is written, and without waiting: poll for it.
    const issuedTemporary = async () =>
      (await events.list(ns)).items.filter(
        (e) => e.involvedObject?.name === 'temp' && e.message === 'Issued temporary certificate',
      );
    const [event] = await eventually(
      async () => ((await issuedTemporary()).length ? issuedTemporary() : undefined),
      'the Issued temporary certificate event',
      10_000,
    );
    assert.equal(event.reason, 'Issuing');
    assert.equal(event.type, 'Normal');
    assert.equal(await getSecret(env, ns, 'plain-tls'), undefined, 'no temporary certificate unless asked');

    const ca = await rootCa();
    await env.secrets.create(ns, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'waiting-ca-key-pair', namespace: ns },
      data: {
        'tls.crt': Buffer.from(ca.certPem).toString('base64'),
        'tls.key': Buffer.from(encodePrivateKey(ca.key, 'PKCS1')).toString('base64'),
      },
    });
    await eventually(
      async () => (readyAndDoneIssuing(await env.certificates.get(ns, 'temp')) ? true : undefined),
      'temp Ready',
      30_000,
    );
    const issued = (await getSecret(env, ns, 'temp-tls'))!;
    const real = new X509Certificate(bytes(issued, 'tls.crt'));
    assert.ok(real.verify(new X509Certificate(ca.certPem).publicKey), 'signed by the Issuer’s CA');
    assert.doesNotMatch(real.subject, /serialNumber/);
    assert.deepEqual(pkcs8(bytes(issued, 'tls.key')), pkcs8(bytes(temporary, 'tls.key')), 'the same key');
    assert.ok(bytes(issued, 'ca.crt').length, 'ca.crt now');
    assert.equal((await issuedTemporary()).length, 1, 'one temporary certificate, not one per reconcile');
  });
});
