import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCertManagerServer } from '@certkit/testenv/apiserver/cert-manager-server';
import type { TestServer } from '@certkit/testenv/apiserver/test-server';
import { runCli } from '@certkit/testenv/cli/cli-process';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { parse } from 'yaml';

/**
 * `certkit convert` as a user migrating manifests written for cert-manager before v1 runs it: the compiled
 * CLI converts a directory of v1alpha2/v1alpha3 manifests, and kubectl applies what it printed to the API
 * server certkit serves, whose cert-manager.io/v1 validation accepts it. And cmctl's errors and exit codes.
 */

const OLD_CERTIFICATE = `apiVersion: cert-manager.io/v1alpha2
kind: Certificate
metadata:
  name: example-com
  namespace: default
spec:
  secretName: example-com-tls
  duration: 2160h
  renewBefore: 360h
  organization:
  - jetstack
  commonName: example.com
  keySize: 2048
  keyAlgorithm: rsa
  keyEncoding: pkcs1
  usages: [server auth, client auth]
  dnsNames: [example.com, www.example.com]
  uriSANs: [spiffe://cluster.local/ns/default/sa/example]
  emailSANs: [admin@example.com]
  issuerRef:
    name: ca-issuer
    kind: Issuer
`;

const OLD_OTHERS = `apiVersion: cert-manager.io/v1alpha3
kind: Issuer
metadata: {name: ca-issuer, namespace: default}
spec:
  ca: {secretName: ca-key-pair}
---
apiVersion: acme.cert-manager.io/v1alpha2
kind: Challenge
metadata: {name: example-com-1-1-1, namespace: default}
spec:
  authzURL: https://acme.example/authz/1
  url: https://acme.example/chall/1
  type: http-01
  dnsName: example.com
  token: token
  key: key
  solver: {http01: {ingress: {}}}
  issuerRef: {name: letsencrypt, kind: ClusterIssuer, group: cert-manager.io}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unchanged, namespace: default}
data: {a: b}
`;

describe('certkit convert', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-convert-'));
    await mkdir(join(dir, 'old'));
    await writeFile(join(dir, 'old', 'certificate.yaml'), OLD_CERTIFICATE);
    await writeFile(join(dir, 'old', 'others.yml'), OLD_OTHERS);
    await writeFile(join(dir, 'old', 'README.txt'), 'not a manifest, not read');
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('prints one object as itself, in YAML with sorted keys, and JSON with -o json', async () => {
    const yaml = await runCli(['convert', '-f', join(dir, 'old', 'certificate.yaml')]);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.match(yaml.stdout, /^apiVersion: cert-manager.io\/v1\nkind: Certificate\nmetadata:\n/);
    assert.deepEqual(parse(yaml.stdout).spec.privateKey, { algorithm: 'RSA', encoding: 'PKCS1', size: 2048 });
    const json = await runCli(['convert', '-f', join(dir, 'old', 'certificate.yaml'), '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), parse(yaml.stdout));
  });

  it('says what is wrong as cmctl does: no -f (exit 2), a missing file or an unknown version (exit 1)', async () => {
    const none = await runCli(['convert']);
    assert.equal(none.code, 2);
    assert.equal(none.stderr, 'certkit: must specify -f: a file, a directory or a URL of manifests\n');
    const missing = await runCli(['convert', '-f', join(dir, 'nope.yaml')]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, `certkit: the path "${join(dir, 'nope.yaml')}" does not exist\n`);
    await writeFile(join(dir, 'v2.yaml'), OLD_CERTIFICATE.replace('v1alpha2', 'v2'));
    const v2 = await runCli(['convert', '-f', join(dir, 'v2.yaml')]);
    assert.equal(v2.code, 1);
    assert.match(
      v2.stderr,
      /^certkit: Certificate "example-com": cert-manager.io\/v2 is not a version of cert-manager.io/,
    );
    const badOutput = await runCli([
      'convert',
      '-f',
      join(dir, 'old'),
      '--output-version',
      'cert-manager.io/v1beta2',
    ]);
    assert.equal(badOutput.code, 2);
    assert.match(badOutput.stderr, /no such version \(v1alpha2, v1alpha3, v1beta1, v1\)/);
  });

  describe('against the API server, with kubectl', { skip: kubectlSkip }, () => {
    let server: TestServer;
    let kubectl: Kubectl;

    before(async () => {
      server = await startCertManagerServer();
      kubectl = kubectlFor(
        { ...process.env, KUBECONFIG: server.kubeconfigPath, KUBECACHEDIR: join(dir, 'cache') },
        dir,
      );
    });
    after(async () => {
      await server?.close();
    });

    it('a directory converted to v1 is applied as it is, the old fields under their v1 names', async () => {
      const converted = await runCli(['convert', '-f', join(dir, 'old')]);
      assert.equal(converted.code, 0, converted.stderr);
      const list = parse(converted.stdout);
      assert.equal(list.kind, 'List');
      assert.deepEqual(
        list.items.map((i: { apiVersion: string; kind: string }) => `${i.apiVersion} ${i.kind}`),
        [
          'cert-manager.io/v1 Certificate',
          'cert-manager.io/v1 Issuer',
          'acme.cert-manager.io/v1 Challenge',
          'v1 ConfigMap',
        ],
      );
      const applied = await kubectl.ok('apply', '-f', await kubectl.manifest(converted.stdout));
      assert.match(applied, /certificate.cert-manager.io\/example-com created/);
      assert.match(applied, /challenge.acme.cert-manager.io\/example-com-1-1-1 created/);
      const certificate = JSON.parse(await kubectl.ok('get', 'certificate', 'example-com', '-o', 'json'));
      assert.deepEqual(certificate.spec.subject, { organizations: ['jetstack'] });
      assert.deepEqual(certificate.spec.emailAddresses, ['admin@example.com']);
      assert.deepEqual(certificate.spec.uris, ['spiffe://cluster.local/ns/default/sa/example']);
      assert.deepEqual(certificate.spec.privateKey, { algorithm: 'RSA', encoding: 'PKCS1', size: 2048 });
      const challenge = JSON.parse(await kubectl.ok('get', 'challenge', 'example-com-1-1-1', '-o', 'json'));
      assert.equal(challenge.spec.type, 'HTTP-01');
      assert.equal(challenge.spec.authorizationURL, 'https://acme.example/authz/1');
      assert.equal(challenge.spec.authzURL, undefined);
    });

    it('the old manifest itself is refused by the v1 API, which is why convert exists', async () => {
      const r = await kubectl.run('apply', '-f', join(dir, 'old', 'certificate.yaml'));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /cert-manager.io\/v1alpha2/);
    });
  });
});
