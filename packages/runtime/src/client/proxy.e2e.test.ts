import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { type ConnectProxy, startConnectProxy } from '@certkit/testenv/http/connect-proxy';
import { stringify } from 'yaml';
import { namespaces } from './builtins.ts';
import type { ClientConfig } from './config.ts';
import { KubeClient } from './kube-client.ts';
import { loadKubeconfig } from './kubeconfig.ts';

/**
 * Proxies as client-go honours them, through a real CONNECT proxy: a kubeconfig `proxy-url`, and HTTPS_PROXY
 * with NO_PROXY, HTTP_PROXY for plain-http servers. Each check runs the three kinds of request the transport sends differently: a unary GET
 * (the own HTTP/1.1 pool), a list read item by item and a watch (node:http).
 */

let t: TestServer;
let dir: string;
let proxy: ConnectProxy | undefined;
const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

before(async () => {
  t = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'certkit-proxy-'));
});
after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const name of PROXY_ENV) delete process.env[name];
  await proxy?.close();
  proxy = undefined;
});

const port = () => new URL(t.url).port;

/** A GET, a streamed list and a watch to its initial-events-end bookmark, all with one client. */
async function exercise(config: ClientConfig): Promise<void> {
  const kube = new KubeClient({ ...config, qps: -1 });
  try {
    const ns = kube.resource(namespaces);
    assert.equal((await ns.get(undefined, 'default')).metadata?.name, 'default');
    const listed: string[] = [];
    await ns.listEach(undefined, {}, (item) => listed.push(item.metadata?.name ?? ''));
    assert.ok(listed.includes('default'), `listed ${listed.join(', ')}`);
    const controller = new AbortController();
    const watch = await ns.watch(undefined, {
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
      signal: controller.signal,
    });
    const added: string[] = [];
    for await (const event of watch) {
      if (event.type === 'ADDED')
        added.push((event.object as { metadata?: { name?: string } }).metadata?.name ?? '');
      if (event.type === 'BOOKMARK') break;
    }
    controller.abort();
    assert.ok(added.includes('default'), `watched ${added.join(', ')}`);
  } finally {
    kube.close();
  }
}

/** The API server over plain HTTP: a gateway that passes each request on to it over HTTPS. */
async function plainHttpGateway(): Promise<{ port: number; close(): Promise<void> }> {
  const agent = new HttpsAgent({ ca: t.caCertPem, keepAlive: true });
  const server = createServer((req, res) => {
    const upstream = httpsRequest(new URL(req.url ?? '/', t.url), {
      method: req.method,
      headers: { ...req.headers, host: new URL(t.url).host },
      agent,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function kubeconfigWithProxy(proxyUrl: string): Promise<string> {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}`);
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: t.url,
            'certificate-authority-data': Buffer.from(t.caCertPem).toString('base64'),
            'proxy-url': proxyUrl,
          },
        },
      ],
      users: [{ name: 'u', user: { token: t.token } }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'ctx',
    }),
  );
  return path;
}

describe('proxies', () => {
  it('sends every kind of request through a kubeconfig proxy-url, with its credentials', async () => {
    proxy = await startConnectProxy({ credentials: 'alice:s3cret' });
    const proxyUrl = new URL(proxy.url);
    proxyUrl.username = 'alice';
    proxyUrl.password = 's3cret';
    // proxy-url applies to a loopback server too, and beats the environment (client-go's http.ProxyURL).
    process.env.NO_PROXY = '*';
    const config = await loadKubeconfig({ path: await kubeconfigWithProxy(proxyUrl.href) });
    assert.equal(config.proxyUrl, proxyUrl.href);
    await exercise(config);
    // The pool's connection and the streaming agent's, at least; each a tunnel to the API server.
    assert.ok(proxy.connects.length >= 2, `${proxy.connects.length} CONNECTs`);
    for (const connect of proxy.connects) {
      assert.deepEqual(connect, {
        target: `127.0.0.1:${port()}`,
        authorization: `Basic ${Buffer.from('alice:s3cret').toString('base64')}`,
      });
    }
  });

  it("tells an exec plugin the cluster's proxy-url (KUBERNETES_EXEC_INFO), as client-go does", async () => {
    proxy = await startConnectProxy();
    const plugin = join(dir, 'plugin.sh');
    const info = join(dir, 'exec-info.json');
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: t.token },
    });
    await writeFile(
      plugin,
      `#!/bin/sh\nprintf '%s' "$KUBERNETES_EXEC_INFO" > '${info}'\nprintf '%s' '${credential}'\n`,
    );
    await chmod(plugin, 0o755);
    const path = join(dir, 'config-exec');
    await writeFile(
      path,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: t.url,
              'certificate-authority-data': Buffer.from(t.caCertPem).toString('base64'),
              'proxy-url': proxy.url,
            },
          },
        ],
        users: [
          {
            name: 'u',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: plugin,
                interactiveMode: 'Never',
                provideClusterInfo: true,
              },
            },
          },
        ],
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'ctx',
      }),
    );
    await exercise(await loadKubeconfig({ path }));
    const spec = JSON.parse(await readFile(info, 'utf8')).spec;
    assert.equal(spec.cluster['proxy-url'], proxy.url);
    assert.ok(proxy.connects.length >= 2, `${proxy.connects.length} CONNECTs`);
  });

  it("fails with the proxy's answer when it refuses the tunnel", async () => {
    proxy = await startConnectProxy({ credentials: 'alice:s3cret' });
    const config = await loadKubeconfig({ path: await kubeconfigWithProxy(proxy.url) });
    const kube = new KubeClient({ ...config, qps: -1 });
    try {
      await assert.rejects(kube.resource(namespaces).get(undefined, 'default'), {
        message: `proxy 127.0.0.1:${new URL(proxy.url).port} refused CONNECT to 127.0.0.1:${port()}: HTTP/1.1 407 Proxy Authentication Required`,
      });
    } finally {
      kube.close();
    }
  });

  it('refuses a proxy-url it cannot speak, naming the cluster', async () => {
    const path = await kubeconfigWithProxy('socks5://127.0.0.1:1080');
    await assert.rejects(loadKubeconfig({ path }), {
      message: `cluster "c" in ${path}: unsupported proxy scheme in proxy-url: "socks5" (http and https are)`,
    });
  });

  it('takes HTTPS_PROXY for a server only the proxy can reach, unless NO_PROXY names it', async () => {
    // A name that does not resolve: the requests can only arrive through the proxy, which routes it.
    const host = 'kube.proxied.test';
    proxy = await startConnectProxy({ routes: { [`${host}:${port()}`]: `127.0.0.1:${port()}` } });
    const config: ClientConfig = {
      server: `https://${host}:${port()}`,
      ca: t.caCertPem,
      tlsServerName: 'localhost', // a name the serving certificate has
      token: t.token,
    };
    process.env.HTTPS_PROXY = proxy.url;
    await exercise(config);
    assert.ok(proxy.connects.length >= 2, `${proxy.connects.length} CONNECTs`);
    assert.ok(proxy.connects.every((c) => c.target === `${host}:${port()}`));

    for (const noProxy of [host, '.proxied.test', `${host}:${port()}`]) {
      process.env.NO_PROXY = noProxy;
      const kube = new KubeClient({ ...config, qps: -1 });
      try {
        await assert.rejects(
          kube.resource(namespaces).get(undefined, 'default'),
          (err: NodeJS.ErrnoException) => {
            assert.match(err.code ?? '', /^(ENOTFOUND|EAI_AGAIN)$/, `NO_PROXY=${noProxy}: ${err.message}`);
            return true;
          },
        );
      } finally {
        kube.close();
      }
    }
  });

  it("sends a plain-http server's requests to HTTP_PROXY in absolute form, with its credentials", async () => {
    const gateway = await plainHttpGateway();
    const host = 'kube.proxied.test';
    try {
      proxy = await startConnectProxy({
        credentials: 'alice:s3cret',
        routes: { [`${host}:${gateway.port}`]: `127.0.0.1:${gateway.port}` },
      });
      const proxyUrl = new URL(proxy.url);
      proxyUrl.username = 'alice';
      proxyUrl.password = 's3cret';
      process.env.HTTP_PROXY = proxyUrl.href;
      process.env.HTTPS_PROXY = 'http://127.0.0.1:9'; // for https servers only: must not be used here
      await exercise({ server: `http://${host}:${gateway.port}`, token: t.token });
      assert.deepEqual(proxy.connects, []);
      assert.ok(proxy.forwarded.length >= 3, `${proxy.forwarded.length} requests forwarded`);
      for (const request of proxy.forwarded) {
        assert.ok(request.url.startsWith(`http://${host}:${gateway.port}/api/v1/namespaces`), request.url);
        assert.equal(request.authorization, `Basic ${Buffer.from('alice:s3cret').toString('base64')}`);
      }
    } finally {
      await gateway.close();
    }
  });

  it('goes directly to a loopback server whatever HTTPS_PROXY says, as Go does', async () => {
    proxy = await startConnectProxy();
    process.env.HTTPS_PROXY = proxy.url;
    await exercise({ server: t.url, ca: t.caCertPem, token: t.token });
    assert.deepEqual(proxy.connects, []);
  });
});
