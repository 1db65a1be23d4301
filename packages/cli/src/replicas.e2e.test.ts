import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { etcdAvailable, type EtcdProcess, startEtcd } from '@certkit/testenv/etcd/etcd';
import { createTestCa, type TestKeyPair } from '@certkit/testenv/pki/auth-certs';
import { CERTKIT_BIN, certkitEnv, type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';
import { type RoundRobin, startRoundRobin } from '@certkit/testenv/cli/round-robin';

/**
 * Two `certkit apiserver` replicas on one etcd, given the same --tls-cert-file, --client-ca-file and
 * --token-auth-file, behind one address: one kubeconfig with a token, and one with a client certificate,
 * work against both, through the shared address and against each replica directly.
 */

const run = promisify(execFile);
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
const skip = !etcdAvailable() ? 'etcd is not installed' : !hasKubectl ? 'kubectl is not on PATH' : false;
if (skip) console.log(`# skipping the replica credentials test: ${skip}`);

const TOKEN = 'shared-token-0123456789';

describe('API server replicas with shared credentials', { skip }, () => {
  let dir: string;
  let etcd: EtcdProcess;
  let replicas: RunningCli[] = [];
  let front: RoundRobin;
  let caPem: string;
  let client: TestKeyPair;
  const files = {
    cert: '',
    key: '',
    clientCa: '',
    tokens: '',
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-replicas-'));
    const serverCa = await createTestCa('replicas-ca');
    const clientCa = await createTestCa('replicas-client-ca');
    const serving = await serverCa.issue({
      commonName: 'certkit-apiserver',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      usages: ['serverAuth'],
    });
    client = await clientCa.issue({ commonName: 'alice', organizations: ['dev'], usages: ['clientAuth'] });
    caPem = serverCa.certPem;
    files.cert = join(dir, 'apiserver.crt');
    files.key = join(dir, 'apiserver.key');
    files.clientCa = join(dir, 'client-ca.crt');
    files.tokens = join(dir, 'tokens.csv');
    // As kube-apiserver's flag help has it: the CA after the certificate.
    await writeFile(files.cert, serving.certPem + serverCa.certPem);
    await writeFile(files.key, serving.keyPem, { mode: 0o600 });
    await writeFile(files.clientCa, clientCa.certPem);
    await writeFile(files.tokens, `${TOKEN},bob,1001,"dev,ops"\n`, { mode: 0o600 });
    etcd = await startEtcd();
    for (const name of ['a', 'b']) {
      replicas.push(
        await startCli([
          'apiserver',
          ...['--data-dir', join(dir, name), '--port', '0'],
          ...['--storage', 'etcd', '--etcd-endpoints', etcd.endpoint],
          ...['--tls-cert-file', files.cert, '--tls-private-key-file', files.key],
          ...['--client-ca-file', files.clientCa, '--token-auth-file', files.tokens],
        ]),
      );
    }
    front = await startRoundRobin(replicas.map((r) => Number(new URL(r.url).port)));
    // bob and alice are outside system:masters: RBAC lets their group `dev` do what these tests do.
    // Each replica has its own generated admin token: each is asked through its own kubeconfig.
    await grantDev(replicas.map((r, i) => [join(dir, ['a', 'b'][i], 'kubeconfig'), r.url]));
  });

  /** Binds group dev to cluster-admin (once: the servers share etcd), and waits until each server applies it. */
  async function grantDev(servers: [adminConfig: string, url: string][]): Promise<void> {
    const env = { ...process.env, KUBECACHEDIR: join(dir, 'kube-cache') };
    await run(
      'kubectl',
      [
        '--kubeconfig',
        servers[0][0],
        'create',
        'clusterrolebinding',
        'dev-admin',
        '--clusterrole=cluster-admin',
        '--group=dev',
      ],
      { env },
    );
    for (const [adminConfig, url] of servers) {
      for (let i = 0; ; i++) {
        const review = await run(
          'kubectl',
          [
            '--kubeconfig',
            adminConfig,
            '--server',
            url,
            'auth',
            'can-i',
            'create',
            'configmaps',
            '--as',
            'bob',
            '--as-group',
            'dev',
          ],
          { env },
        ).catch((err: { stdout?: string; stderr?: string }) => ({
          stdout: `${err.stdout ?? ''}${err.stderr ?? ''}`,
        }));
        if (review.stdout.trim() === 'yes') break;
        if (i > 100) assert.fail(`the dev binding never took effect on ${url}: ${review.stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  after(async () => {
    await front?.close();
    for (const replica of replicas) await replica.stop('SIGINT');
    await etcd?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  /** A kubeconfig for the shared address, trusting the replicas' CA, with one user's credentials. */
  async function kubeconfig(name: string, user: Record<string, string>): Promise<string> {
    const path = join(dir, `${name}.kubeconfig`);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const userLines = Object.entries(user).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`);
    await writeFile(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: replicas',
        '  cluster:',
        `    server: https://127.0.0.1:${front.port}`,
        `    certificate-authority-data: ${b64(caPem)}`,
        'users:',
        `- name: ${name}`,
        '  user:',
        ...userLines,
        'contexts:',
        `- name: ${name}`,
        '  context:',
        '    cluster: replicas',
        `    user: ${name}`,
        `current-context: ${name}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return path;
  }

  const kubectl = (config: string, ...args: string[]) =>
    run('kubectl', ['--kubeconfig', config, ...args], {
      env: { ...process.env, KUBECACHEDIR: join(dir, 'kube-cache') },
    });

  it('accepts one token kubeconfig on both replicas, through the shared address and directly', async () => {
    const config = await kubeconfig('token', { token: TOKEN });
    const before = [...front.connections];
    await kubectl(config, 'create', 'configmap', 'shared', '--from-literal=written=through-the-front');
    for (let i = 0; i < 4; i++) {
      const { stdout } = await kubectl(
        config,
        'get',
        'configmap',
        'shared',
        '-o',
        'jsonpath={.data.written}',
      );
      assert.equal(stdout, 'through-the-front');
    }
    // Every replica answered some of them.
    assert.ok(
      front.connections.every((n, i) => n > before[i]),
      `connections per replica: ${front.connections}`,
    );
    for (const replica of replicas) {
      const { stdout } = await kubectl(config, '--server', replica.url, 'get', 'namespaces', '-o', 'name');
      assert.match(stdout, /namespace\/default/);
    }
  });

  it('accepts one client-certificate kubeconfig on both replicas', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const config = await kubeconfig('alice', {
      'client-certificate-data': b64(client.certPem),
      'client-key-data': b64(client.keyPem),
    });
    for (const replica of replicas) {
      const { stdout } = await kubectl(
        config,
        '--server',
        replica.url,
        'get',
        'configmap',
        'shared',
        '-o',
        'name',
      );
      assert.equal(stdout.trim(), 'configmap/shared');
    }
  });

  it('certkit up serves the same files, its own controller trusting the CA that follows the certificate', async () => {
    // The in-process controller reaches its API server through the kubeconfig `up` writes; with
    // --tls-cert-file that kubeconfig trusts the CA found after the certificate in the file.
    const up = await startCli([
      'up',
      ...['--data-dir', join(dir, 'up'), '--port', '0'],
      ...['--tls-cert-file', files.cert, '--tls-private-key-file', files.key],
      ...['--client-ca-file', files.clientCa, '--token-auth-file', files.tokens],
    ]);
    try {
      assert.match(up.output(), /certificate controller running/);
      await grantDev([[join(dir, 'up', 'kubeconfig'), up.url]]);
      const config = await kubeconfig('token-up', { token: TOKEN });
      const { stdout } = await kubectl(
        config,
        '--server',
        up.url,
        'get',
        'crd',
        'certificates.cert-manager.io',
        '-o',
        'name',
      );
      assert.equal(
        stdout.trim(),
        'customresourcedefinition.apiextensions.k8s.io/certificates.cert-manager.io',
      );
      const written = await kubectl(join(dir, 'up', 'kubeconfig'), 'get', 'namespaces', '-o', 'name');
      assert.match(written.stdout, /namespace\/default/);
    } finally {
      assert.equal(await up.stop('SIGINT'), 0);
    }
  });

  it('answers 401 to a wrong token on both replicas', async () => {
    const config = await kubeconfig('wrong', { token: 'not-a-listed-token' });
    for (const replica of replicas) {
      const err = await kubectl(config, '--server', replica.url, 'get', 'namespaces').then(
        () => assert.fail('a wrong token was accepted'),
        (e: { stderr: string }) => e,
      );
      assert.match(err.stderr, /Unauthorized/);
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          `${replica.url}/api/v1/namespaces`,
          { ca: caPem, agent: false, headers: { Authorization: 'Bearer not-a-listed-token' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 401);
    }
  });
});

describe('certkit apiserver credential flags', () => {
  it('refuses a certificate without its key, or a key that is not the certificate’s, with one line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-flags-'));
    try {
      const ca = await createTestCa('flags-ca');
      const one = await ca.issue({ commonName: 'one', ipAddresses: ['127.0.0.1'] });
      const two = await ca.issue({ commonName: 'two', ipAddresses: ['127.0.0.1'] });
      await writeFile(join(dir, 'one.crt'), one.certPem);
      await writeFile(join(dir, 'two.key'), two.keyPem);
      await writeFile(join(dir, 'short.csv'), 'token-only,user\n');
      const attempt = (...args: string[]) =>
        run(
          process.execPath,
          [CERTKIT_BIN, 'apiserver', '--data-dir', join(dir, 'data'), '--port', '0', ...args],
          {
            timeout: 20_000,
            env: certkitEnv(),
          },
        ).then(
          () => assert.fail(`certkit apiserver ${args.join(' ')} started`),
          (e: { code: number; stderr: string }) => e,
        );
      const cases: [string[], number, RegExp][] = [
        [['--tls-cert-file', join(dir, 'one.crt')], 2, /must be given together/],
        [
          ['--tls-cert-file', join(dir, 'one.crt'), '--tls-private-key-file', join(dir, 'two.key')],
          1,
          /--tls-cert-file: .*two\.key is not the private key of the certificate/,
        ],
        [['--client-ca-file', join(dir, 'two.key')], 1, /--client-ca-file: .* holds no PEM certificate/],
        [['--token-auth-file', join(dir, 'short.csv')], 1, /--token-auth-file: .*at least 3 columns/],
        [['--token-auth-file', join(dir, 'missing.csv')], 1, /--token-auth-file: ENOENT/],
      ];
      for (const [args, code, message] of cases) {
        const err = await attempt(...args);
        assert.equal(err.code, code, args.join(' '));
        assert.equal(err.stderr.trim().split('\n').length, 1, err.stderr);
        assert.match(err.stderr, message);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
