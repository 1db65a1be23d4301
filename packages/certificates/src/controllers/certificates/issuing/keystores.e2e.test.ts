/**
 * spec.keystores end to end: the whole controller on the embedded API server, a CA Issuer (so the Secret has
 * a ca.crt and truststores are due), and the keystores read back by the tools their users have: keytool for
 * JKS, openssl for PKCS#12. Also: a keystore removed from the Secret comes back and an unwanted one goes,
 * both without re-issuance; a missing password Secret is a Warning event until it appears.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { Event, Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateSpec } from '../../../api/types.ts';
import {
  type Environment,
  eventually,
  getSecret,
  type PreparedIssuer,
  prepareIssuer,
  readyAndDoneIssuing,
  startEnvironment,
} from '@certkit/testenv/conformance/environment';
import { opensslUnavailable } from '@certkit/testenv/conformance/openssl';

const ns = 'keystores';
const JKS_PASSWORD = 'jks-pass-from-secret';
const P12_PASSWORD = 'literal-p12-pass';

function keytoolUnavailable(): string | undefined {
  const result = spawnSync('keytool', ['-help'], { encoding: 'utf8' });
  return result.error ? `keytool is not on PATH (${result.error.message})` : undefined;
}
const skip = opensslUnavailable() ?? keytoolUnavailable();

let env: Environment;
let issuer: PreparedIssuer;

/** Runs a tool on `files` written to a fresh directory; returns its output, failing the test on a non-zero exit. */
function run(tool: string, args: (dir: string) => string[], files: Record<string, Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'certkit-keystores-'));
  try {
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
    const result = spawnSync(tool, args(dir), { encoding: 'utf8' });
    const output = `${result.stdout}${result.stderr}`;
    assert.equal(result.status, 0, `${tool} failed: ${output}`);
    return output;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const bytes = (secret: Secret | undefined, key: string) => Buffer.from(secret?.data?.[key] ?? '', 'base64');
const pkcs8 = (pem: string | Buffer) => createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });

async function createCertificate(name: string, spec: Partial<CertificateSpec>): Promise<void> {
  await env.certificates.create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: ns },
    spec: {
      secretName: `${name}-tls`,
      issuerRef: issuer.issuerRef,
      dnsNames: [`${name}.example.com`],
      ...spec,
    },
  });
}

const ready = (name: string) =>
  eventually(
    async () => {
      const cert = await env.certificates.get(ns, name);
      return readyAndDoneIssuing(cert) ? cert : undefined;
    },
    `${name} Ready`,
    30_000,
  );

async function secretWhere(name: string, predicate: (s: Secret) => boolean, what: string): Promise<Secret> {
  return eventually(
    async () => {
      const secret = await getSecret(env, ns, name);
      return secret && predicate(secret) ? secret : undefined;
    },
    what,
    30_000,
  );
}

async function createPasswordSecret(name: string): Promise<void> {
  // Unlabelled, as users create them: the controller reads it with a live GET.
  await env.secrets.create(ns, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    data: { password: Buffer.from(JKS_PASSWORD).toString('base64') },
  });
}

before(async () => {
  if (skip) return;
  env = await startEnvironment();
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
  issuer = await prepareIssuer(env, { title: 'CA Issuer', kind: 'Issuer', type: 'CA' }, ns, 'keystores');
});

after(async () => {
  await env?.close();
});

describe('spec.keystores on the embedded API server', { skip }, () => {
  const keystores: CertificateSpec['keystores'] = {
    jks: { create: true, alias: 'server', passwordSecretRef: { name: 'jks-password', key: 'password' } },
    pkcs12: { create: true, profile: 'Modern2023', password: P12_PASSWORD },
  };

  it('writes JKS and PKCS#12 keystores and truststores that keytool and openssl open', async () => {
    await createPasswordSecret('jks-password');
    await createCertificate('both', { keystores });
    await ready('both');
    const secret = (await getSecret(env, ns, 'both-tls'))!;
    const key = bytes(secret, 'tls.key');
    const ca = bytes(secret, 'ca.crt');
    assert.ok(ca.length, 'a CA Issuer gives ca.crt, so truststores are due');

    const jks = run(
      'keytool',
      (d) => ['-list', '-v', '-storetype', 'JKS', '-keystore', join(d, 'k.jks'), '-storepass', JKS_PASSWORD],
      { 'k.jks': bytes(secret, 'keystore.jks') },
    );
    assert.match(jks, /Alias name: server\s+Creation date: .*\s+Entry type: PrivateKeyEntry/);
    assert.match(jks, /Alias name: ca\s+Creation date: .*\s+Entry type: trustedCertEntry/);
    const trustJks = run(
      'keytool',
      (d) => ['-list', '-storetype', 'JKS', '-keystore', join(d, 't.jks'), '-storepass', JKS_PASSWORD],
      { 't.jks': bytes(secret, 'truststore.jks') },
    );
    assert.match(trustJks, /^ca, .*trustedCertEntry/m);

    const p12 = run(
      'openssl',
      (d) => ['pkcs12', '-in', join(d, 'k.p12'), '-nodes', '-passin', `pass:${P12_PASSWORD}`],
      { 'k.p12': bytes(secret, 'keystore.p12') },
    );
    const printedKey = /-----BEGIN PRIVATE KEY-----[\s\S]*?-----END PRIVATE KEY-----/.exec(p12)?.[0];
    assert.ok(printedKey, p12);
    assert.deepEqual(pkcs8(printedKey), pkcs8(key), 'keystore.p12 holds tls.key');
    const caBody = ca.toString().replace(/-----[^-]+-----|\s/g, '');
    assert.ok(p12.replace(/\s/g, '').includes(caBody), 'keystore.p12 holds the CA certificate');
    const trustP12 = run(
      'keytool',
      (d) => ['-list', '-storetype', 'PKCS12', '-keystore', join(d, 't.p12'), '-storepass', P12_PASSWORD],
      { 't.p12': bytes(secret, 'truststore.p12') },
    );
    assert.match(trustP12, /trustedCertEntry/);
  });

  it('puts back a keystore removed from the Secret, and removes one no longer wanted, without re-issuing', async () => {
    const before = await ready('both');
    const secret = (await getSecret(env, ns, 'both-tls'))!;
    const oldJks = secret.data!['keystore.jks'];
    const data = { ...secret.data };
    delete data['keystore.jks'];
    await env.secrets.update({ ...secret, data } as typeof secret);
    const restored = await secretWhere(
      'both-tls',
      (s) => Boolean(s.data?.['keystore.jks']),
      'keystore.jks written again',
    );
    assert.notEqual(restored.data!['keystore.jks'], oldJks, 'encoded afresh (new salt)');
    assert.equal(restored.data!['tls.crt'], secret.data!['tls.crt'], 'same certificate');

    await env.certificates.patch(ns, 'both', 'merge', { spec: { keystores: { jks: { create: false } } } });
    const without = await secretWhere(
      'both-tls',
      (s) => !s.data?.['keystore.jks'] && !s.data?.['truststore.jks'],
      'JKS keys removed',
    );
    assert.ok(without.data!['keystore.p12'], 'PKCS#12 stays');
    const after = await ready('both');
    assert.equal(after.status?.revision, before.status?.revision, 'no re-issuance');
  });

  it('reports a missing password Secret with a Warning event, and issues once it exists', async () => {
    await createCertificate('late', {
      keystores: { jks: { create: true, passwordSecretRef: { name: 'late-password', key: 'password' } } },
    });
    const events = env.admin.resource<Event & KubeObject>(builtins.events);
    const warning = await eventually(
      async () =>
        (await events.list(ns)).items.find(
          (e) => e.involvedObject?.name === 'late' && e.reason === 'KeystorePasswordSecretNotFound',
        ),
      'KeystorePasswordSecretNotFound event',
      30_000,
    );
    assert.equal(warning.type, 'Warning');
    assert.equal(warning.message, 'JKS keystore password Secret "late-password" not found');
    const pending: Certificate = await env.certificates.get(ns, 'late');
    assert.ok(!readyAndDoneIssuing(pending), 'not Ready without its keystore');

    await createPasswordSecret('late-password');
    await ready('late');
    const secret = await getSecret(env, ns, 'late-tls');
    const listed = run(
      'keytool',
      (d) => ['-list', '-storetype', 'JKS', '-keystore', join(d, 'k.jks'), '-storepass', JKS_PASSWORD],
      { 'k.jks': bytes(secret, 'keystore.jks') },
    );
    assert.match(listed, /^certificate, .*PrivateKeyEntry/m, 'the default alias');
  });
});
