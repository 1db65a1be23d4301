import 'reflect-metadata';
import assert from 'node:assert/strict';
import { createPrivateKey, KeyObject, webcrypto, X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { createServer, get, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as x509 from '@peculiar/x509';
import { ensureServingCertificates, type ServingCertificates } from './certificates.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function readPki(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key']) {
    files[name] = await readFile(join(dir, 'pki', name), 'utf8');
  }
  return files;
}

async function mode(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

describe('ensureServingCertificates', () => {
  it('creates a CA and a serving certificate with the expected properties', async (t) => {
    const dir = await tempDir(t);
    const result = await ensureServingCertificates(dir, ['api.example.test', '10.1.2.3']);

    const files = await readPki(dir);
    assert.equal(files['ca.crt'], result.caCertPem);
    assert.equal(files['apiserver.crt'], result.certPem);
    assert.equal(files['apiserver.key'], result.keyPem);
    assert.equal(await mode(join(dir, 'pki')), 0o700);
    assert.equal(await mode(join(dir, 'pki', 'ca.key')), 0o600);
    assert.equal(await mode(join(dir, 'pki', 'apiserver.key')), 0o600);

    const ca = new X509Certificate(result.caCertPem);
    assert.equal(ca.ca, true);
    assert.equal(ca.subject, 'CN=certkit-ca');
    assert.ok(ca.verify(ca.publicKey), 'CA is self-signed');
    assert.ok(ca.checkPrivateKey(createPrivateKey(files['ca.key'])));
    const caYears = (ca.validToDate.getTime() - ca.validFromDate.getTime()) / (365 * DAY_MS);
    assert.ok(caYears > 9.9 && caYears < 10.1, `CA validity ${caYears} years`);

    const cert = new X509Certificate(result.certPem);
    assert.equal(cert.ca, false);
    assert.ok(cert.checkIssued(ca));
    assert.ok(cert.verify(ca.publicKey), 'serving certificate is signed by the CA');
    assert.ok(cert.checkPrivateKey(createPrivateKey(result.keyPem)));
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'extended key usage is serverAuth only');
    const days = (cert.validToDate.getTime() - Date.now()) / DAY_MS;
    assert.ok(days > 364 && days <= 365, `serving validity ${days} days`);
    assert.equal(cert.checkHost('localhost', { subject: 'never' }), 'localhost');
    assert.equal(cert.checkHost('api.example.test', { subject: 'never' }), 'api.example.test');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkIP('::1'), '::1');
    assert.equal(cert.checkIP('10.1.2.3'), '10.1.2.3');
    assert.equal(cert.checkIP('10.1.2.4'), undefined);
    assert.equal(cert.checkHost('other.example.test', { subject: 'never' }), undefined);

    // Structural details node:crypto does not expose, checked with the same library that wrote them.
    const caParsed = new x509.X509Certificate(result.caCertPem);
    const basic = caParsed.getExtension(x509.BasicConstraintsExtension);
    assert.ok(basic?.ca && basic.critical);
    const usage = caParsed.getExtension(x509.KeyUsagesExtension);
    assert.equal(usage?.usages, x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    const ski = caParsed.getExtension(x509.SubjectKeyIdentifierExtension);
    assert.ok(ski);
    const certParsed = new x509.X509Certificate(result.certPem);
    assert.equal(certParsed.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId, ski.keyId);
    assert.equal(
      certParsed.getExtension(x509.KeyUsagesExtension)?.usages,
      x509.KeyUsageFlags.digitalSignature,
    );
  });

  it('reuses the files on later calls', async (t) => {
    const dir = await tempDir(t);
    const first = await ensureServingCertificates(dir, ['api.example.test']);
    const before = await readPki(dir);
    const second = await ensureServingCertificates(dir, ['api.example.test']);
    assert.deepEqual(second, first);
    assert.deepEqual(await readPki(dir), before);
    // Hosts already covered (including the defaults, in another spelling) do not force a new certificate.
    const third = await ensureServingCertificates(dir, ['API.example.test.', '[0:0::1]', 'localhost']);
    assert.equal(third.certPem, first.certPem);
  });

  it('reissues the serving certificate from the same CA when a host is not covered', async (t) => {
    const dir = await tempDir(t);
    const first = await ensureServingCertificates(dir, []);
    const caKey = await readFile(join(dir, 'pki', 'ca.key'), 'utf8');
    const second = await ensureServingCertificates(dir, ['0.0.0.0', 'node1.example.test']);

    assert.equal(second.caCertPem, first.caCertPem);
    assert.equal(await readFile(join(dir, 'pki', 'ca.key'), 'utf8'), caKey);
    assert.notEqual(second.certPem, first.certPem);
    assert.notEqual(second.keyPem, first.keyPem);
    const cert = new X509Certificate(second.certPem);
    assert.ok(cert.verify(new X509Certificate(first.caCertPem).publicKey));
    assert.equal(cert.checkIP('0.0.0.0'), '0.0.0.0');
    assert.equal(cert.checkHost('node1.example.test', { subject: 'never' }), 'node1.example.test');
    assert.equal(cert.checkHost('localhost', { subject: 'never' }), 'localhost');
    assert.equal(await mode(join(dir, 'pki', 'apiserver.key')), 0o600);
  });

  it('reissues an unparseable, mismatched or foreign serving certificate', async (t) => {
    const dir = await tempDir(t);
    const first = await ensureServingCertificates(dir, []);
    const certPath = join(dir, 'pki', 'apiserver.crt');
    const keyPath = join(dir, 'pki', 'apiserver.key');

    await writeFile(certPath, 'not a certificate');
    const afterGarbage = await ensureServingCertificates(dir, []);
    assert.equal(afterGarbage.caCertPem, first.caCertPem);
    assert.notEqual(afterGarbage.certPem, first.certPem);

    await writeFile(keyPath, await readFile(join(dir, 'pki', 'ca.key')));
    const afterWrongKey = await ensureServingCertificates(dir, []);
    assert.notEqual(afterWrongKey.certPem, afterGarbage.certPem);
    assert.ok(
      new X509Certificate(afterWrongKey.certPem).checkPrivateKey(createPrivateKey(afterWrongKey.keyPem)),
    );

    await unlink(keyPath);
    const afterMissingKey = await ensureServingCertificates(dir, []);
    assert.notEqual(afterMissingKey.certPem, afterWrongKey.certPem);

    // Valid key pair and SANs, but issued by some other CA: e.g. left over after the CA was replaced.
    const other = await ensureServingCertificates(await tempDir(t), []);
    await writeFile(certPath, other.certPem);
    await writeFile(keyPath, other.keyPem);
    const afterForeign = await ensureServingCertificates(dir, []);
    assert.equal(afterForeign.caCertPem, first.caCertPem);
    assert.ok(
      new X509Certificate(afterForeign.certPem).verify(new X509Certificate(first.caCertPem).publicKey),
    );
  });

  it('reissues a serving certificate that expires within 30 days', async (t) => {
    const dir = await tempDir(t);
    const first = await ensureServingCertificates(dir, []);
    const certPath = join(dir, 'pki', 'apiserver.crt');

    // Re-sign the existing key with the CA for a short lifetime, otherwise identical.
    const caKeyPem = await readFile(join(dir, 'pki', 'ca.key'), 'utf8');
    const signingKey = createPrivateKey(caKeyPem).toCryptoKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'sign',
    ]);
    const template = new x509.X509Certificate(first.certPem);
    const short = await x509.X509CertificateGenerator.create(
      {
        subject: template.subjectName,
        issuer: template.issuerName,
        notBefore: new Date(Date.now() - DAY_MS),
        notAfter: new Date(Date.now() + 10 * DAY_MS),
        publicKey: template.publicKey,
        signingKey,
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
        extensions: template.extensions,
      },
      webcrypto as unknown as Crypto,
    );
    await writeFile(certPath, short.toString('pem'));
    assert.ok(
      new X509Certificate(short.toString('pem')).verify(new X509Certificate(first.caCertPem).publicKey),
    );

    const renewed = await ensureServingCertificates(dir, []);
    assert.equal(renewed.caCertPem, first.caCertPem);
    assert.notEqual(renewed.certPem, short.toString('pem'));
    assert.ok(new X509Certificate(renewed.certPem).validToDate.getTime() > Date.now() + 300 * DAY_MS);
  });

  it('replaces a missing or broken CA and everything issued by it', async (t) => {
    const dir = await tempDir(t);
    const first = await ensureServingCertificates(dir, []);
    await unlink(join(dir, 'pki', 'ca.key'));
    const second = await ensureServingCertificates(dir, []);
    assert.notEqual(second.caCertPem, first.caCertPem);
    assert.ok(new X509Certificate(second.certPem).verify(new X509Certificate(second.caCertPem).publicKey));
    assert.equal(await mode(join(dir, 'pki', 'ca.key')), 0o600);
  });

  it('issues from a CA installed by hand, keeping it', async (t) => {
    const dir = await tempDir(t);
    const crypto = webcrypto as unknown as Crypto;
    const algorithm = {
      name: 'RSASSA-PKCS1-v1_5',
      hash: 'SHA-256',
      publicExponent: new Uint8Array([1, 0, 1]),
    };
    const keys = await webcrypto.subtle.generateKey({ ...algorithm, modulusLength: 2048 }, true, [
      'sign',
      'verify',
    ]);
    const caCert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        name: 'CN=Example Corp Root, O=Example',
        keys,
        signingAlgorithm: algorithm,
        notAfter: new Date(Date.now() + 1000 * DAY_MS),
        extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
      },
      crypto,
    );
    const caCertPem = caCert.toString('pem');
    const caKeyPem = KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string;
    await mkdir(join(dir, 'pki'), { recursive: true });
    await writeFile(join(dir, 'pki', 'ca.crt'), caCertPem);
    await writeFile(join(dir, 'pki', 'ca.key'), caKeyPem, { mode: 0o600 });

    const result = await ensureServingCertificates(dir, []);
    assert.equal(result.caCertPem, caCertPem);
    const ca = new X509Certificate(caCertPem);
    const cert = new X509Certificate(result.certPem);
    assert.ok(cert.checkIssued(ca));
    assert.ok(cert.verify(ca.publicKey));
    assert.equal(cert.issuer, ca.subject);
  });

  it('refuses, rather than replaces, a CA whose key type it cannot sign with', async (t) => {
    const dir = await tempDir(t);
    const crypto = webcrypto as unknown as Crypto;
    const keys = (await webcrypto.subtle.generateKey({ name: 'Ed25519' }, true, [
      'sign',
      'verify',
    ])) as unknown as webcrypto.CryptoKeyPair;
    const caCert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        name: 'CN=Ed25519 CA',
        keys,
        signingAlgorithm: { name: 'Ed25519' },
        extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
      },
      crypto,
    );
    await mkdir(join(dir, 'pki'), { recursive: true });
    await writeFile(join(dir, 'pki', 'ca.crt'), caCert.toString('pem'));
    const keyPem = KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string;
    await writeFile(join(dir, 'pki', 'ca.key'), keyPem, { mode: 0o600 });

    await assert.rejects(ensureServingCertificates(dir, []), /unsupported CA key type ed25519/);
    assert.equal(await readFile(join(dir, 'pki', 'ca.crt'), 'utf8'), caCert.toString('pem'));
  });

  it('rejects hosts that cannot go in a certificate', async (t) => {
    const dir = await tempDir(t);
    for (const host of ['', 'has space.example', 'http://example.test', 'example.test:6443', 'a..b']) {
      await assert.rejects(ensureServingCertificates(dir, [host]), /cannot put host/, host);
    }
  });
});

interface GetResult {
  status: number | undefined;
  body: string;
}

function httpsGet(options: {
  host: string;
  port: number;
  ca?: string;
  servername?: string;
}): Promise<GetResult> {
  return new Promise((resolve, reject) => {
    // agent: false so no kept-alive socket outlives the test and holds the server open.
    const request = get({ ...options, path: '/', agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

describe('TLS with the generated certificates', () => {
  let certs: ServingCertificates;
  let server: Server;
  let port: number;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-tls-'));
    certs = await ensureServingCertificates(dir, []);
    server = createServer({ cert: certs.certPem, key: certs.keyPem }, (_request, response) => {
      response.end('hello');
    });
    port = await listen(server, '127.0.0.1');
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('is trusted by name when the client trusts the CA', async () => {
    const result = await httpsGet({ host: '127.0.0.1', port, ca: certs.caCertPem, servername: 'localhost' });
    assert.deepEqual(result, { status: 200, body: 'hello' });
  });

  it('is trusted by IP address when the client trusts the CA', async () => {
    const result = await httpsGet({ host: '127.0.0.1', port, ca: certs.caCertPem });
    assert.deepEqual(result, { status: 200, body: 'hello' });
  });

  it('is rejected without the CA', async () => {
    await assert.rejects(httpsGet({ host: '127.0.0.1', port, servername: 'localhost' }), (error: Error) => {
      assert.match((error as NodeJS.ErrnoException).code ?? '', /CERT|SIGNATURE|ISSUER/);
      return true;
    });
  });

  it('is rejected for a name it does not cover', async () => {
    await assert.rejects(
      httpsGet({ host: '127.0.0.1', port, ca: certs.caCertPem, servername: 'elsewhere.example.test' }),
      { code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    );
  });

  it('is trusted over IPv6 loopback', async (t) => {
    const server6 = createServer({ cert: certs.certPem, key: certs.keyPem }, (_request, response) => {
      response.end('hello6');
    });
    let port6: number;
    try {
      port6 = await listen(server6, '::1');
    } catch (error) {
      t.skip(`cannot listen on ::1: ${(error as Error).message}`);
      return;
    }
    try {
      const result = await httpsGet({ host: '::1', port: port6, ca: certs.caCertPem });
      assert.deepEqual(result, { status: 200, body: 'hello6' });
    } finally {
      server6.closeAllConnections();
      await new Promise((resolve) => server6.close(resolve));
    }
  });
});
