import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv } from '@certkit/testenv/cli/cli-process';

/**
 * What a user gets from `npm start`: `certkit up`, then `kubectl apply -f examples/`, and within seconds every
 * Certificate is Ready with a valid key pair; invalid cert-manager objects are refused at admission.
 */

const here = dirname(fileURLToPath(import.meta.url));
// The command as users run it: bin/certkit.js over the build (certkitEnv refuses a stale one).
const main = CERTKIT_BIN;
const examples = join(here, '../../../examples');
const run = promisify(execFile);
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
const skip = hasKubectl ? false : 'kubectl is not on PATH';
if (skip) console.log(`# skipping the certkit up walkthrough: ${skip}`);

describe('certkit up with the examples', { skip }, () => {
  let dir: string;
  let child: ChildProcess;
  let env: NodeJS.ProcessEnv;
  const kubectl = (...args: string[]) => run('kubectl', args, { env });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-up-'));
    env = { ...certkitEnv(), KUBECONFIG: join(dir, 'kubeconfig'), KUBECACHEDIR: join(dir, 'kube-cache') };
    child = spawn(process.execPath, [main, 'up', '--data-dir', dir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('certificate controller running')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`certkit up exited with ${code}: ${out}`)));
    });
  });

  after(async () => {
    // No child when `before` failed (a stale build, say), or one that has exited: waiting for its exit would hang.
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('issues every example Certificate within seconds, with valid key pairs', async () => {
    await kubectl('apply', '-f', examples);
    const started = Date.now();
    let ready: string[] = [];
    while (Date.now() - started < 20_000) {
      const { stdout } = await kubectl('get', 'certificates', '-o', 'json');
      const items = JSON.parse(stdout).items as {
        metadata: { name: string };
        status?: { conditions?: { type: string; status: string }[] };
      }[];
      ready = items
        .filter((c) => c.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True'))
        .map((c) => c.metadata.name);
      if (ready.length === 4) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(ready.sort(), ['client', 'ephemeral', 'root-ca', 'web']);
    const table = (await kubectl('get', 'certificates')).stdout;
    assert.match(table, /NAME\s+READY\s+SECRET\s+AGE/);
    const secret = JSON.parse((await kubectl('get', 'secret', 'web-tls', '-o', 'json')).stdout);
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.equal(secret.metadata.labels['controller.cert-manager.io/fao'], 'true');
    const { X509Certificate, createPrivateKey } = await import('node:crypto');
    const cert = new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
    const ca = new X509Certificate(Buffer.from(secret.data['ca.crt'], 'base64'));
    assert.ok(cert.checkPrivateKey(createPrivateKey(Buffer.from(secret.data['tls.key'], 'base64'))));
    assert.ok(cert.verify(ca.publicKey), 'the leaf chains to the example root CA');
    assert.match(cert.subjectAltName ?? '', /DNS:web\.example\.com/);
    const client = JSON.parse((await kubectl('get', 'secret', 'client-tls', '-o', 'json')).stdout);
    assert.ok(client.data['keystore.p12'] && client.data['truststore.p12'], 'the client’s PKCS#12 keystore');
    const status = await run(process.execPath, [main, 'status', '--kubeconfig', env.KUBECONFIG!], { env });
    assert.match(status.stdout, /default\s+web\s+True\s+Issuer\/example-ca/);
  });

  it('secrets audit: lists unlabelled keystore password and missing CA Secrets, and clears once labelled', async () => {
    const audit = () =>
      run(process.execPath, [main, 'secrets', 'audit', '--kubeconfig', env.KUBECONFIG!], { env });
    assert.equal(
      (await audit()).stdout,
      'Every Secret referenced by an issuer or a keystore is labelled controller.cert-manager.io/fao=true.\n',
      'the example CA Secret is the controller’s own, labelled',
    );
    const manifest = join(dir, 'keystore.yaml');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      manifest,
      [
        'apiVersion: v1\nkind: Secret\nmetadata: {name: app-keystore-password, namespace: default}\nstringData: {password: changeit}',
        'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: app, namespace: default}\nspec:\n  secretName: app-tls\n  dnsNames: [app.example.com]\n  issuerRef: {name: example-ca}\n  keystores:\n    pkcs12:\n      create: true\n      passwordSecretRef: {name: app-keystore-password, key: password}',
        'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: broken, namespace: default}\nspec:\n  ca: {secretName: missing-ca}',
        // An ACME issuer: its account key is generated (not missing), its RFC2136 TSIG Secret is the user's.
        'apiVersion: v1\nkind: Secret\nmetadata: {name: tsig, namespace: default}\nstringData: {secret: c2VjcmV0}',
        'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: acme, namespace: default}\nspec:\n  acme:\n    server: https://127.0.0.1:1/directory\n    privateKeySecretRef: {name: acme-account}\n    solvers:\n      - dns01:\n          rfc2136: {nameserver: 127.0.0.1, tsigKeyName: k, tsigSecretSecretRef: {name: tsig, key: secret}}',
      ].join('\n---\n'),
    );
    await kubectl('apply', '-f', manifest);
    const rows = (await audit()).stdout.trim().split('\n');
    assert.match(rows[0], /^NAMESPACE\s+SECRET\s+REFERENCED BY\s+STATE\s+FIX$/);
    assert.deepEqual(
      rows
        .slice(1)
        .map((r) => r.split(/\s{2,}/))
        .sort(),
      [
        [
          'default',
          'app-keystore-password',
          'Certificate/app',
          'not labelled',
          'kubectl label secret -n default app-keystore-password controller.cert-manager.io/fao=true',
        ],
        ['default', 'missing-ca', 'Issuer/broken', 'missing', '-'],
        [
          'default',
          'tsig',
          'Issuer/acme',
          'not labelled',
          'kubectl label secret -n default tsig controller.cert-manager.io/fao=true',
        ],
      ],
    );

    // The keystore itself, through `certkit up` and kubectl as a user would see it.
    await kubectl('wait', '--for=condition=Ready', 'certificate/app', '--timeout=20s');
    const secret = JSON.parse((await kubectl('get', 'secret', 'app-tls', '-o', 'json')).stdout);
    assert.ok(secret.data['keystore.p12'], 'keystore.p12 written');
    assert.ok(secret.data['truststore.p12'], 'truststore.p12 written (the CA Issuer gives ca.crt)');

    await kubectl('label', 'secret', 'app-keystore-password', 'controller.cert-manager.io/fao=true');
    await kubectl('delete', 'issuer', 'broken', 'acme');
    assert.match((await audit()).stdout, /^Every Secret referenced/);
  });

  it('refuses an invalid Certificate at admission, naming the field', async () => {
    const bad = join(dir, 'bad.yaml');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      bad,
      'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: bad, namespace: default}\nspec:\n  secretName: bad-tls\n  duration: 10m\n  dnsNames: [bad.example.com]\n  issuerRef: {name: example-ca}\n',
    );
    const err = await kubectl('apply', '-f', bad).then(
      () => assert.fail('an invalid Certificate was admitted'),
      (e: { stderr: string }) => e,
    );
    assert.match(err.stderr, /spec\.duration/);
  });
});
