import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { isUnauthorized } from '@certkit/apimachinery';
import { loopbackServingCertificates } from '@certkit/testenv/pki/loopback-serving';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { stringify } from 'yaml';
import { namespaces } from './builtins.ts';
import type { ClientConfig } from './config.ts';
import { inClusterConfig } from './in-cluster.ts';
import { KubeClient } from './kube-client.ts';
import { loadKubeconfig } from './kubeconfig.ts';
import { loadClientConfig } from './load-config.ts';

/** Kubeconfig and in-cluster loading, each credential kind proven by real requests. */

let t: TestServer;
let dir: string;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

before(async () => {
  t = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'certkit-kubeconfig-'));
});
after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

/** Lists namespaces with the config; returns how many. */
async function works(config: ClientConfig): Promise<number> {
  const kube = new KubeClient({ ...config, qps: -1 });
  try {
    return (await kube.resource(namespaces).list(undefined)).items.length;
  } finally {
    kube.close();
  }
}

interface Entry {
  name: string;
  [key: string]: unknown;
}

function kubeconfig(options: {
  clusters?: Entry[];
  users?: Entry[];
  contexts?: Entry[];
  current?: string;
}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: options.clusters ?? [
      { name: 'c', cluster: { server: t.url, 'certificate-authority-data': b64(t.caCertPem) } },
    ],
    users: options.users ?? [{ name: 'u', user: { token: t.token } }],
    contexts: options.contexts ?? [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': options.current ?? 'ctx',
  });
}

let files = 0;
async function write(content: string, subdir = ''): Promise<string> {
  const where = join(dir, subdir);
  await mkdir(where, { recursive: true });
  const path = join(where, `config-${files++}`);
  await writeFile(path, content);
  return path;
}

describe('loadKubeconfig', () => {
  it('loads the kubeconfig the API server writes, and it works', async () => {
    const config = await loadKubeconfig({ path: t.kubeconfigPath });
    assert.equal(config.server, t.url);
    assert.equal(config.token, t.token);
    assert.equal(config.ca, t.caCertPem);
    assert.equal(config.namespace, 'default');
    assert.ok((await works(config)) > 0);
  });

  it('uses $KUBECONFIG, skipping missing files and merging the rest, first name wins', async () => {
    const first = await write(
      kubeconfig({
        users: [{ name: 'u', user: { token: t.token } }],
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'from-first' } }],
      }),
    );
    const second = await write(
      stringify({
        contexts: [
          { name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'from-second' } },
          { name: 'other', context: { cluster: 'c', user: 'u', namespace: 'other-ns' } },
        ],
        'current-context': 'other',
      }),
    );
    const env = { KUBECONFIG: [join(dir, 'missing'), first, second].join(':') };
    assert.equal((await loadKubeconfig({ env })).namespace, 'from-first');
    assert.equal((await loadKubeconfig({ env, context: 'other' })).namespace, 'other-ns');
    await assert.rejects(
      loadKubeconfig({ env: { KUBECONFIG: join(dir, 'missing') } }),
      /none of the kubeconfig files/,
    );
  });

  it('reads a kubeconfig written as JSON, and a YAML one that opens with a flow mapping', async () => {
    // JSON is parsed without the YAML library (a controller given one never loads it: docs/adr/1130); the
    // same data as YAML flow style starts with "{" too but is not JSON, and is still read as YAML.
    const data = {
      clusters: [{ name: 'c', cluster: { server: t.url, 'certificate-authority-data': b64(t.caCertPem) } }],
      users: [{ name: 'u', user: { token: t.token } }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'from-json' } }],
      'current-context': 'ctx',
    };
    const json = await loadKubeconfig({ path: await write(`\n  ${JSON.stringify(data, null, 2)}\n`) });
    assert.equal(json.namespace, 'from-json');
    assert.ok((await works(json)) > 0);
    const flow = stringify(
      { ...data, contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'from-flow' } }] },
      { collectionStyle: 'flow' },
    );
    assert.ok(flow.startsWith('{') && !flow.startsWith('{"'), flow.slice(0, 40));
    assert.equal((await loadKubeconfig({ path: await write(flow) })).namespace, 'from-flow');
    await assert.rejects(
      loadKubeconfig({ path: await write('{"clusters": [}') }),
      /kubeconfig .*config-\d+: /,
    );
  });

  it('falls back to ~/.kube/config', async () => {
    const home = join(dir, 'home');
    await mkdir(join(home, '.kube'), { recursive: true });
    await writeFile(join(home, '.kube', 'config'), kubeconfig({}));
    assert.equal((await loadKubeconfig({ env: { HOME: home } })).server, t.url);
    await assert.rejects(
      loadKubeconfig({ env: { HOME: join(dir, 'nohome') } }),
      /KUBECONFIG is not set and .*\.kube\/config does not exist/,
    );
  });

  it('selects a named context over current-context', async () => {
    const path = await write(
      kubeconfig({
        users: [
          { name: 'good', user: { token: t.token } },
          { name: 'bad', user: { token: 'wrong' } },
        ],
        contexts: [
          { name: 'bad', context: { cluster: 'c', user: 'bad' } },
          { name: 'good', context: { cluster: 'c', user: 'good', namespace: 'team-a' } },
        ],
        current: 'bad',
      }),
    );
    await assert.rejects(works(await loadKubeconfig({ path })), isUnauthorized);
    const good = await loadKubeconfig({ path, context: 'good' });
    assert.equal(good.namespace, 'team-a');
    assert.ok((await works(good)) > 0);
  });

  it('names the missing piece in its errors', async () => {
    const path = await write(
      kubeconfig({
        contexts: [
          { name: 'ctx', context: { cluster: 'c', user: 'u' } },
          { name: 'no-cluster', context: { cluster: 'gone', user: 'u' } },
          { name: 'no-user', context: { cluster: 'c', user: 'nobody' } },
          { name: 'no-server', context: { cluster: 'empty', user: 'u' } },
        ],
        clusters: [
          { name: 'c', cluster: { server: t.url } },
          { name: 'empty', cluster: {} },
        ],
      }),
    );
    await assert.rejects(loadKubeconfig({ path, context: 'x' }), {
      message: `context "x" not found in ${path}`,
    });
    await assert.rejects(loadKubeconfig({ path, context: 'no-cluster' }), {
      message: `cluster "gone" of context "no-cluster" not found in ${path}`,
    });
    await assert.rejects(loadKubeconfig({ path, context: 'no-user' }), {
      message: `user "nobody" of context "no-user" not found in ${path}`,
    });
    await assert.rejects(
      loadKubeconfig({ path, context: 'no-server' }),
      /cluster "empty" in .* has no server/,
    );
    const noCurrent = await write(stringify({ clusters: [], users: [], contexts: [] }));
    await assert.rejects(loadKubeconfig({ path: noCurrent }), /no current-context is set/);
    // One clear line: the path once, the cause in words (Node's own message would repeat the path).
    await assert.rejects(loadKubeconfig({ path: join(dir, 'nope') }), {
      message: `kubeconfig ${join(dir, 'nope')}: no such file (ENOENT)`,
    });
    await assert.rejects(loadKubeconfig({ path: dir }), {
      message: `kubeconfig ${dir}: is a directory, not a file (EISDIR)`,
    });
    const provider = await write(
      kubeconfig({ users: [{ name: 'u', user: { 'auth-provider': { name: 'gcp' } } }] }),
    );
    await assert.rejects(
      loadKubeconfig({ path: provider }),
      /auth-provider "gcp" is not supported; use an exec/,
    );
  });

  it('reads a token file relative to the kubeconfig, re-reading it after a 401', async () => {
    await mkdir(join(dir, 'tf'), { recursive: true });
    const tokenPath = join(dir, 'tf', 'token');
    await writeFile(tokenPath, 'wrong-token\n');
    const path = await write(kubeconfig({ users: [{ name: 'u', user: { tokenFile: 'token' } }] }), 'tf');
    const config = await loadKubeconfig({ path });
    const kube = new KubeClient({ ...config, qps: -1 });
    try {
      await assert.rejects(kube.resource(namespaces).list(undefined), isUnauthorized);
      // The token rotated; the 401 made the client drop the cached one.
      await writeFile(tokenPath, `${t.token}\n`);
      assert.ok((await kube.resource(namespaces).list(undefined)).items.length > 0);
    } finally {
      kube.close();
    }
    await assert.rejects(
      loadKubeconfig({
        path: await write(kubeconfig({ users: [{ name: 'u', user: { tokenFile: 'absent' } }] })),
      }),
      /reading token file/,
    );
  });

  it('reads client certificates from data and from relative files', async () => {
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const key = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
    const fromData = await loadKubeconfig({
      path: await write(
        kubeconfig({
          users: [{ name: 'u', user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) } }],
        }),
      ),
    });
    assert.equal(fromData.cert, cert);
    assert.equal(fromData.key, key);
    await mkdir(join(dir, 'certs', 'pki'), { recursive: true });
    await writeFile(join(dir, 'certs', 'pki', 'client.crt'), cert);
    await writeFile(join(dir, 'certs', 'pki', 'client.key'), key);
    await writeFile(join(dir, 'certs', 'pki', 'ca.crt'), t.caCertPem);
    const fromFiles = await loadKubeconfig({
      path: await write(
        kubeconfig({
          clusters: [{ name: 'c', cluster: { server: t.url, 'certificate-authority': 'pki/ca.crt' } }],
          users: [
            { name: 'u', user: { 'client-certificate': 'pki/client.crt', 'client-key': 'pki/client.key' } },
          ],
        }),
        'certs',
      ),
    });
    assert.equal(fromFiles.cert, cert);
    assert.equal(fromFiles.key, key);
    assert.equal(fromFiles.ca, t.caCertPem);
    await assert.rejects(
      loadKubeconfig({
        path: await write(
          kubeconfig({ users: [{ name: 'u', user: { 'client-certificate-data': b64(cert) } }] }),
        ),
      }),
      /client-key-data or client-key must be specified for u/,
    );
  });

  it('honours insecure-skip-tls-verify, and refuses it together with a CA', async () => {
    const insecure = await loadKubeconfig({
      path: await write(
        kubeconfig({
          clusters: [{ name: 'c', cluster: { server: t.url, 'insecure-skip-tls-verify': true } }],
        }),
      ),
    });
    assert.equal(insecure.insecureSkipTlsVerify, true);
    assert.ok((await works(insecure)) > 0);
    const untrusted = await loadKubeconfig({
      path: await write(kubeconfig({ clusters: [{ name: 'c', cluster: { server: t.url } }] })),
    });
    await assert.rejects(works(untrusted), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    await assert.rejects(
      loadKubeconfig({
        path: await write(
          kubeconfig({
            clusters: [
              {
                name: 'c',
                cluster: {
                  server: t.url,
                  'insecure-skip-tls-verify': true,
                  'certificate-authority-data': b64(t.caCertPem),
                },
              },
            ],
          }),
        ),
      }),
      /specifying a root certificates file with the insecure flag is not allowed/,
    );
  });

  it('verifies the server against tls-server-name', async () => {
    const named = (name: string) =>
      write(
        kubeconfig({
          clusters: [
            {
              name: 'c',
              cluster: {
                server: t.url,
                'certificate-authority-data': b64(t.caCertPem),
                'tls-server-name': name,
              },
            },
          ],
        }),
      );
    assert.ok((await works(await loadKubeconfig({ path: await named('localhost') }))) > 0);
    await assert.rejects(works(await loadKubeconfig({ path: await named('wrong.example') })), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });
});

describe('exec credential plugins', () => {
  let pluginDir: string;
  let plugin: string;
  before(async () => {
    pluginDir = join(dir, 'plugin');
    await mkdir(pluginDir, { recursive: true });
    plugin = join(pluginDir, 'credential-plugin.sh');
    // Counts its runs, records KUBERNETES_EXEC_INFO and prints out-<run>.json if present, else out.json.
    await writeFile(
      plugin,
      [
        '#!/bin/sh',
        'n=$(cat "$PLUGIN_DIR/count" 2>/dev/null || echo 0)',
        'n=$((n + 1))',
        'echo "$n" > "$PLUGIN_DIR/count"',
        'printf "%s" "$KUBERNETES_EXEC_INFO" > "$PLUGIN_DIR/info.json"',
        'printf "%s" "$*" > "$PLUGIN_DIR/args"',
        'if [ -f "$PLUGIN_DIR/out-$n.json" ]; then cat "$PLUGIN_DIR/out-$n.json"; else cat "$PLUGIN_DIR/out.json"; fi',
        '',
      ].join('\n'),
    );
    await chmod(plugin, 0o755);
  });

  const credential = (apiVersion: string, status: Record<string, unknown>) =>
    JSON.stringify({ apiVersion, kind: 'ExecCredential', status });

  async function reset(outputs: Record<string, string>): Promise<void> {
    await rm(join(pluginDir, 'count'), { force: true });
    for (const f of ['out.json', 'out-1.json', 'out-2.json']) await rm(join(pluginDir, f), { force: true });
    for (const [name, content] of Object.entries(outputs)) await writeFile(join(pluginDir, name), content);
  }

  const runs = async () => Number((await readFile(join(pluginDir, 'count'), 'utf8')).trim());

  const execUser = (exec: Record<string, unknown>) => [
    {
      name: 'u',
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: './credential-plugin.sh',
          args: ['--cluster', 'c1'],
          env: [{ name: 'PLUGIN_DIR', value: pluginDir }],
          interactiveMode: 'Never',
          ...exec,
        },
      },
    },
  ];

  it('runs the plugin (v1) with args, env and KUBERNETES_EXEC_INFO, and caches the token until it expires', async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    await reset({
      'out.json': credential('client.authentication.k8s.io/v1', {
        token: t.token,
        expirationTimestamp: future,
      }),
    });
    const path = await write(kubeconfig({ users: execUser({ provideClusterInfo: true }) }), 'plugin');
    const config = await loadKubeconfig({ path });
    assert.ok((await works(config)) > 0);
    assert.ok((await works(config)) > 0);
    assert.equal(await runs(), 1, 'the unexpired token was reused');
    const info = JSON.parse(await readFile(join(pluginDir, 'info.json'), 'utf8'));
    assert.equal(info.apiVersion, 'client.authentication.k8s.io/v1');
    assert.equal(info.kind, 'ExecCredential');
    assert.equal(info.spec.interactive, false);
    assert.equal(info.spec.cluster.server, t.url);
    assert.equal(
      Buffer.from(info.spec.cluster['certificate-authority-data'], 'base64').toString(),
      t.caCertPem,
    );
    assert.equal(await readFile(join(pluginDir, 'args'), 'utf8'), '--cluster c1');
  });

  it('runs it again once the credential expired, and after a 401 (v1beta1)', async () => {
    const past = new Date(Date.now() - 1000).toISOString();
    await reset({
      'out-1.json': credential('client.authentication.k8s.io/v1beta1', {
        token: t.token,
        expirationTimestamp: past,
      }),
      'out-2.json': credential('client.authentication.k8s.io/v1beta1', { token: 'revoked' }),
      'out.json': credential('client.authentication.k8s.io/v1beta1', { token: t.token }),
    });
    const path = await write(
      kubeconfig({
        users: execUser({ apiVersion: 'client.authentication.k8s.io/v1beta1', interactiveMode: undefined }),
      }),
      'plugin',
    );
    const kube = new KubeClient({ ...(await loadKubeconfig({ path })), qps: -1 });
    try {
      await kube.resource(namespaces).list(undefined); // run 1: expired at once
      // Run 2 returns a token the server refuses: the 401 makes the client run the plugin again (run 3) and
      // send the request once more.
      assert.ok((await kube.resource(namespaces).list(undefined)).items.length > 0);
      assert.equal(await runs(), 3);
      await kube.resource(namespaces).list(undefined);
      assert.equal(await runs(), 3, 'no expiry: cached');
    } finally {
      kube.close();
    }
  });

  it('reports plugin failures with client-go messages', async () => {
    const load = async (exec: Record<string, unknown>, outputs: Record<string, string>) => {
      await reset(outputs);
      const config = await loadKubeconfig({
        path: await write(kubeconfig({ users: execUser(exec) }), 'plugin'),
      });
      return works(config);
    };
    await assert.rejects(load({}, { 'out.json': credential('client.authentication.k8s.io/v1', {}) }), {
      message: "exec plugin didn't return a token or cert/key pair",
    });
    await assert.rejects(
      load({}, { 'out.json': credential('client.authentication.k8s.io/v1beta1', { token: 'x' }) }),
      {
        message:
          'exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1',
      },
    );
    await assert.rejects(
      load({}, { 'out.json': credential('client.authentication.k8s.io/v1', { clientCertificateData: 'x' }) }),
      { message: 'exec plugin returned only certificate or key, not both' },
    );
    await assert.rejects(load({ command: 'certkit-no-such-plugin', installHint: 'install it' }, {}), {
      message: 'exec: executable certkit-no-such-plugin not found\n\ninstall it',
    });
    await assert.rejects(
      load({ command: '/bin/false' }, {}),
      /exec: executable \/bin\/false failed with exit code 1/,
    );
    await assert.rejects(
      loadKubeconfig({
        path: await write(kubeconfig({ users: execUser({ interactiveMode: undefined }) }), 'plugin'),
      }),
      /interactiveMode must be specified for u to use exec authentication plugin/,
    );
    await assert.rejects(
      loadKubeconfig({
        path: await write(
          kubeconfig({ users: execUser({ apiVersion: 'client.authentication.k8s.io/v1alpha1' }) }),
          'plugin',
        ),
      }),
      /exec plugin: invalid apiVersion "client.authentication.k8s.io\/v1alpha1"/,
    );
  });
});

describe('client certificates over TLS', () => {
  it('presents the kubeconfig client certificate, or one an exec plugin returned', async () => {
    const pki = join(dir, 'mtls');
    await mkdir(pki, { recursive: true });
    const serving = await loopbackServingCertificates(pki);
    // A self-signed client certificate (no EKU): the server trusts exactly it.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=certkit-client',
        '-keyout',
        join(pki, 'client.key'),
        '-out',
        join(pki, 'client.crt'),
      ],
      { stdio: 'ignore' },
    );
    const clientCert = await readFile(join(pki, 'client.crt'), 'utf8');
    const clientKey = await readFile(join(pki, 'client.key'), 'utf8');
    const server = createServer(
      {
        key: serving.keyPem,
        cert: serving.certPem,
        ca: clientCert,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'NamespaceList',
            apiVersion: 'v1',
            metadata: {},
            items: [{ metadata: { name: peer.subject.CN } }],
          }),
        );
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const cluster = [
        { name: 'c', cluster: { server: url, 'certificate-authority-data': b64(serving.caCertPem) } },
      ];
      const fromKubeconfig = await loadKubeconfig({
        path: await write(
          kubeconfig({
            clusters: cluster,
            users: [
              {
                name: 'u',
                user: { 'client-certificate-data': b64(clientCert), 'client-key-data': b64(clientKey) },
              },
            ],
          }),
        ),
      });
      const list = async (config: ClientConfig) => {
        const kube = new KubeClient({ ...config, qps: -1 });
        try {
          return (await kube.resource(namespaces).list(undefined)).items.map((i) => i.metadata?.name);
        } finally {
          kube.close();
        }
      };
      assert.deepEqual(await list(fromKubeconfig), ['certkit-client']);

      const pluginDir = join(dir, 'plugin');
      await writeFile(
        join(pluginDir, 'cert-plugin.sh'),
        `#!/bin/sh\ncat <<'EOF'\n${JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: { clientCertificateData: clientCert, clientKeyData: clientKey },
        })}\nEOF\n`,
      );
      await chmod(join(pluginDir, 'cert-plugin.sh'), 0o755);
      const fromPlugin = await loadKubeconfig({
        path: await write(
          kubeconfig({
            clusters: cluster,
            users: [
              {
                name: 'u',
                user: {
                  exec: {
                    apiVersion: 'client.authentication.k8s.io/v1',
                    command: './cert-plugin.sh',
                    interactiveMode: 'Never',
                  },
                },
              },
            ],
          }),
          'plugin',
        ),
      });
      assert.deepEqual(await list(fromPlugin), ['certkit-client']);

      const noCert = await loadKubeconfig({
        path: await write(kubeconfig({ clusters: cluster, users: [{ name: 'u', user: {} }] })),
      });
      await assert.rejects(list(noCert));
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('inClusterConfig', () => {
  it('reads the service account and re-reads its rotating token', async () => {
    const sa = join(dir, 'serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), t.token);
    await writeFile(join(sa, 'ca.crt'), t.caCertPem);
    await writeFile(join(sa, 'namespace'), 'certkit-system\n');
    const port = new URL(t.url).port;
    const config = await inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port },
      serviceAccountDir: sa,
      tokenRefreshMs: 50,
    });
    assert.equal(config.server, `https://127.0.0.1:${port}`);
    assert.equal(config.namespace, 'certkit-system');
    assert.equal(config.ca, t.caCertPem);
    const kube = new KubeClient({ ...config, qps: -1 });
    try {
      await kube.resource(namespaces).list(undefined);
      await writeFile(join(sa, 'token'), 'rotated-to-something-invalid');
      await new Promise((r) => setTimeout(r, 100));
      await assert.rejects(kube.resource(namespaces).list(undefined), isUnauthorized);
    } finally {
      kube.close();
    }
    const v6 = await inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
    });
    assert.equal(v6.server, 'https://[fd00::1]:443');
  });

  it('says what is missing outside a cluster', async () => {
    await assert.rejects(inClusterConfig({ env: {} }), {
      message:
        'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    });
    await assert.rejects(
      inClusterConfig({
        env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
        serviceAccountDir: join(dir, 'no-sa'),
      }),
      /reading token file/,
    );
  });
});

describe('loadClientConfig', () => {
  it('takes --kubeconfig, then $KUBECONFIG, then the service account in a pod, then ~/.kube/config', async () => {
    const sa = join(dir, 'pod-serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), t.token);
    await writeFile(join(sa, 'ca.crt'), t.caCertPem);
    const port = new URL(t.url).port;
    const pod = { KUBERNETES_SERVICE_HOST: 'localhost', KUBERNETES_SERVICE_PORT: port };
    const home = join(dir, 'pod-home');
    await mkdir(join(home, '.kube'), { recursive: true });
    await writeFile(join(home, '.kube', 'config'), kubeconfig({}));
    const flag = await write(
      kubeconfig({
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'from-flag' } }],
      }),
    );
    const fromEnv = await write(
      kubeconfig({
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'from-env' } }],
      }),
    );

    const inPod = await loadClientConfig({ env: { ...pod, HOME: home }, serviceAccountDir: sa });
    assert.equal(inPod.server, `https://localhost:${port}`);
    assert.equal(await works(inPod), await works(await loadKubeconfig({ path: flag })));
    assert.equal(
      (await loadClientConfig({ path: flag, env: { ...pod, HOME: home }, serviceAccountDir: sa })).namespace,
      'from-flag',
    );
    assert.equal(
      (await loadClientConfig({ env: { ...pod, KUBECONFIG: fromEnv, HOME: home }, serviceAccountDir: sa }))
        .namespace,
      'from-env',
    );
    assert.equal((await loadClientConfig({ env: { HOME: home } })).server, t.url);
  });
});
