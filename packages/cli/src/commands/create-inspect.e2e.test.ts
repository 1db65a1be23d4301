import assert from 'node:assert/strict';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Certificate, CertificateRequest, Issuer } from '@certkit/certificates/api/types';
import { certificateRequestsRef, certificatesRef, issuersRef } from '@certkit/certificates/controllers/refs';
import { builtins, KubeClient, loadKubeconfig, type ResourceClient } from '@certkit/runtime';
import { type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * `certkit create certificaterequest` and `certkit inspect secret` as a user runs them, against `certkit up`
 * (the API server and the controller): a request is signed by a CA Issuer and fetched; a Certificate's
 * Secret is decoded. And `check api` says the API of a running `up` is ready.
 */

describe('certkit create certificaterequest, inspect secret (against certkit up)', () => {
  let dir: string;
  let cli: RunningCli;
  let admin: KubeClient;
  let kubeconfig: string;
  let certificates: ResourceClient<Certificate>;
  let requests: ResourceClient<CertificateRequest>;

  async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const value = await probe();
        if (value !== undefined) return value;
      } catch (err) {
        if (attempt > 600) throw err;
      }
      if (attempt > 600) throw new Error(`${what}: not within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const ready = (name: string) =>
    until(`Certificate ${name} Ready`, async () => {
      const cert = await certificates.get('default', name);
      return cert.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? cert
        : undefined;
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-create-'));
    cli = await startCli(['up', '--data-dir', dir, '--port', '0']);
    kubeconfig = join(dir, 'kubeconfig');
    admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
    certificates = admin.resource<Certificate>(certificatesRef);
    requests = admin.resource<CertificateRequest>(certificateRequestsRef);
    const issuers = admin.resource<Issuer>(issuersRef);
    await until('the CRDs served', () => issuers.list('default', { limit: 1 }));
    // selfsigned → the CA Certificate "root" → the CA Issuer "ca", which signs what the tests ask for.
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
        commonName: 'test root',
        subject: { organizations: ['certkit tests'] },
        issuerRef: { name: 'selfsigned' },
        privateKey: { algorithm: 'ECDSA' },
      },
    } as Certificate);
    await ready('root');
    await issuers.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'ca', namespace: 'default' },
      spec: { ca: { secretName: 'root-tls' } },
    } as Issuer);
    await certificates.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        secretName: 'web-tls',
        commonName: 'web',
        dnsNames: ['web.example.test'],
        ipAddresses: ['192.0.2.7'],
        usages: ['digital signature', 'server auth'],
        issuerRef: { name: 'ca' },
        privateKey: { algorithm: 'RSA', size: 2048 },
      },
    } as Certificate);
    await ready('web');
  });

  after(async () => {
    admin?.close();
    await cli?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const run = (...args: string[]) => runCli([...args, '--kubeconfig', kubeconfig, '-n', 'default']);

  it('check api: a running certkit up is ready, at once', async () => {
    const result = await run('check', 'api');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'The cert-manager API is ready\n');
  });

  it("inspect secret NAME: the Secret's certificate decoded, its chain, key match, ca.crt and expiry", async () => {
    const result = await run('inspect', 'secret', 'web-tls');
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    const secret = await admin
      .resource<{ data: Record<string, string> } & Record<string, unknown>>(builtins.secrets)
      .get('default', 'web-tls');
    const x509 = new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
    assert.match(
      out,
      /^Valid for:\n\tDNS Names: \n\t\t- web\.example\.test\n\tURIs: <none>\n\tIP Addresses: \n\t\t- 192\.0\.2\.7\n/,
    );
    assert.match(out, /\tUsages: \n\t\t- digital signature\n\t\t- server auth\n/);
    assert.match(
      out,
      /\tNot After: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d UTC\n\tState: expires in (89|90) days\n/,
    );
    assert.match(out, /Issued By:\n\tCommon Name:\ttest root\n\tOrganization:\tcertkit tests\n/);
    assert.match(out, /Issued For:\n\tCommon Name:\tweb\n/);
    assert.match(out, /\tPublic Key Algorithm: \tRSA\n/);
    assert.ok(out.includes(`\tSerial Number:\t${BigInt(`0x${x509.serialNumber}`)}\n`));
    assert.ok(out.includes(`\tFingerprints: \t${x509.fingerprint256}\n`));
    assert.match(out, /\tIs a CA certificate: false\n/);
    assert.match(
      out,
      /Chain \(tls\.crt, 1 certificate\):\n\t0: CN=web \(issued by O=certkit tests, CN=test root, /,
    );
    assert.match(out, /Private Key:\n\tMatches the certificate: yes\n/);
    assert.match(
      out,
      /CA \(ca\.crt\):\n\tO=certkit tests, CN=test root \(CA, expires in \d+ days\)\n\tIssued the chain: yes\n/,
    );
    assert.match(
      out,
      /\tTrusted by this computer:\tno: certificate signed by unknown authority\n\tTrusted by ca\.crt:\tyes\n/,
    );
  });

  it('inspect secret: a missing Secret, one without a certificate, no name: one line, non-zero', async () => {
    const missing = await run('inspect', 'secret', 'nope');
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'certkit: error when finding Secret "nope": secrets "nope" not found\n');
    await admin.resource(builtins.secrets).create('default', {
      metadata: { name: 'plain', namespace: 'default' },
      data: { password: Buffer.from('x').toString('base64') },
    } as never);
    const plain = await run('inspect', 'secret', 'plain');
    assert.equal(plain.code, 1);
    assert.equal(plain.stderr, "certkit: the Secret has no 'tls.crt'\n");
    const noName = await run('inspect', 'secret');
    assert.equal(noName.code, 2);
    assert.equal(noName.stderr, 'certkit: the name of the Secret has to be provided as argument\n');
  });

  async function template(name: string, spec: Record<string, unknown>, extra = ''): Promise<string> {
    const path = join(dir, `${name}.yaml`);
    await writeFile(
      path,
      `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: ${name}\n  labels: {team: a}\nspec: ${JSON.stringify(spec)}\n${extra}`,
    );
    return path;
  }

  it('create certificaterequest --fetch-certificate: a key file (0600), the request, its signed certificate', async () => {
    const file = await template('tmpl', {
      dnsNames: ['cr.example.test'],
      issuerRef: { name: 'ca' },
      secretName: 'unused',
      privateKey: { algorithm: 'ECDSA', size: 384 },
      duration: '48h',
    });
    const keyFile = join(dir, 'my.key');
    const certFile = join(dir, 'my.crt');
    // Files left there, readable by others: the key and certificate written over them are owner-only all the same.
    await writeFile(keyFile, 'old\n', { mode: 0o644 });
    await chmod(keyFile, 0o644);
    await writeFile(certFile, 'old\n', { mode: 0o644 });
    await chmod(certFile, 0o644);
    const result = await run(
      'create',
      'certificaterequest',
      'my-cr',
      '--from-certificate-file',
      file,
      '--fetch-certificate',
      '--output-key-file',
      keyFile,
      '--output-certificate-file',
      certFile,
      '--timeout',
      '30s',
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `Private key written to file ${keyFile}\n` +
        'CertificateRequest my-cr has been created in namespace default\n' +
        'CertificateRequest my-cr in namespace default has not been signed yet. Wait until it is signed...\n' +
        'CertificateRequest my-cr in namespace default has been signed\n' +
        `Certificate written to file ${certFile}\n`,
    );
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.equal((await stat(certFile)).mode & 0o777, 0o600);
    const key = createPublicKey(await readFile(keyFile));
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'secp384r1');
    const signed = new X509Certificate(await readFile(certFile));
    assert.ok(signed.publicKey.equals(key), 'the certificate is for the generated key');
    assert.equal(signed.subjectAltName, 'DNS:cr.example.test');
    const cr = await requests.get('default', 'my-cr');
    assert.deepEqual(cr.metadata.labels, { team: 'a' });
    assert.equal(cr.spec.duration, '48h');
    assert.equal(cr.spec.issuerRef.name, 'ca');
  });

  it('create certificaterequest: NAME.key in the working directory by default; without --fetch-certificate it returns once created', async () => {
    const file = await template('plain', { commonName: 'plain', issuerRef: { name: 'ca' }, secretName: 'x' });
    const created = await runCli(
      [
        'create',
        'certificaterequest',
        'cr-plain',
        '--from-certificate-file',
        file,
        '--kubeconfig',
        kubeconfig,
      ],
      { cwd: dir },
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal(
      created.stderr,
      'Private key written to file cr-plain.key\nCertificateRequest cr-plain has been created in namespace default\n',
    );
    // The Certificate's default key: RSA 2048, PKCS#1.
    const pem = await readFile(join(dir, 'cr-plain.key'), 'utf8');
    assert.match(pem, /^-----BEGIN RSA PRIVATE KEY-----\n/);
    assert.equal(createPublicKey(pem).asymmetricKeyDetails?.modulusLength, 2048);
    await assert.rejects(stat(join(dir, 'cr-plain.crt')), { code: 'ENOENT' });
    assert.equal((await requests.get('default', 'cr-plain')).spec.issuerRef.name, 'ca');
  });

  it('create certificaterequest: mistakes are one line, non-zero', async () => {
    const noFile = await run('create', 'certificaterequest', 'x');
    assert.equal(noFile.code, 2);
    assert.match(
      noFile.stderr,
      /^certkit: the path to a YAML manifest of a Certificate resource cannot be empty, please specify by using --from-certificate-file flag\n$/,
    );
    const good = await template('good', { commonName: 'g', issuerRef: { name: 'ca' }, secretName: 'x' });
    const certWithoutFetch = await run(
      'create',
      'certificaterequest',
      'x',
      '--from-certificate-file',
      good,
      '--output-certificate-file',
      'x.crt',
    );
    assert.equal(certWithoutFetch.code, 2);
    assert.match(
      certWithoutFetch.stderr,
      /^certkit: cannot specify file to store certificate if not waiting for and fetching certificate, please set --fetch-certificate flag\n$/,
    );
    const two = await template(
      'two',
      { commonName: 'g', issuerRef: { name: 'ca' }, secretName: 'x' },
      '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
    );
    const multiple = await run('create', 'certificaterequest', 'x', '--from-certificate-file', two);
    assert.equal(multiple.code, 1);
    assert.equal(
      multiple.stderr,
      `certkit: multiple objects found in manifest file ${JSON.stringify(two)}. Expected only one Certificate object\n`,
    );
    const missingFile = await run(
      'create',
      'certificaterequest',
      'x',
      '--from-certificate-file',
      join(dir, 'absent.yaml'),
    );
    assert.equal(missingFile.code, 1);
    assert.equal(
      missingFile.stderr,
      `certkit: --from-certificate-file ${join(dir, 'absent.yaml')}: no such file (ENOENT)\n`,
    );
    // A request nobody signs (its Issuer does not exist) times out with one line.
    const orphan = await template('orphan', {
      commonName: 'o',
      issuerRef: { name: 'no-such-issuer' },
      secretName: 'x',
    });
    const timedOut = await run(
      'create',
      'cr', // cmctl's alias
      'orphan',
      '--from-certificate-file',
      orphan,
      '--fetch-certificate',
      '--output-key-file',
      join(dir, 'orphan.key'),
      '--output-certificate-file',
      join(dir, 'orphan.crt'),
      '--timeout',
      '2s',
    );
    // cmctl's exit status for a wait that ran out (its context.DeadlineExceeded).
    assert.equal(timedOut.code, 124);
    assert.match(
      timedOut.stderr.split('\n').at(-2)!,
      /^certkit: error when waiting for CertificateRequest to be signed: not signed within 2s/,
    );
    // An existing name: the API server's AlreadyExists, one line.
    const again = await run(
      'create',
      'certificaterequest',
      'my-cr',
      '--from-certificate-file',
      good,
      '--output-key-file',
      join(dir, 'again.key'),
    );
    assert.equal(again.code, 1);
    assert.match(again.stderr, /certkit: certificaterequests\.cert-manager\.io "my-cr" already exists\n$/);
  });
});
