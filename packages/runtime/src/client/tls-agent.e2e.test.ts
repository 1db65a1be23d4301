import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loopbackServingCertificates } from '@certkit/testenv/pki/loopback-serving';

/**
 * Watches and streamed lists over https go through node:http with an agent of TLS connections
 * (tls-agent.ts): in a fresh process, a watch and a streamed list against a TLS server work, send the Host
 * header https.request would, and leave node:https unloaded.
 */

const run = promisify(execFile);
const entry = join(import.meta.dirname, '..', 'index.ts');
const event = (type: string, name: string) =>
  `${JSON.stringify({ type, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } })}\n`;

let dir: string;
let server: Server;
let url: string;
let ca: string;
const hosts: string[] = [];
/** The SNI name each TLS connection asked for ('' without). */
const servernames: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certkit-tls-agent-'));
  const serving = await loopbackServingCertificates(dir);
  ca = serving.caCertPem;
  server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    hosts.push(req.headers.host ?? '');
    const servername = (req.socket as TLSSocket).servername;
    servernames.push(typeof servername === 'string' ? servername : '');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      res.write(event('ADDED', 'a'));
      setTimeout(() => res.end(event('MODIFIED', 'a')), 20);
    } else {
      res.end(
        JSON.stringify({
          kind: 'ConfigMapList',
          metadata: { resourceVersion: '7' },
          items: [{ metadata: { name: 'b' } }],
        }),
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('streamed requests over https', () => {
  /** A watch and a streamed list in a fresh process; what they received and whether node:https loaded. */
  async function watchAndList(serverUrl: string) {
    const script = `const { KubeClient, builtins: { configMaps } } = await import(${JSON.stringify(entry)});
      const kube = new KubeClient({ server: process.env.URL, ca: process.env.CA, qps: -1 });
      const events = [];
      for await (const e of await kube.resource(configMaps).watch('ns', {})) events.push(e.type + ' ' + e.object.metadata.name);
      const items = [];
      const meta = await kube.resource(configMaps).listEach('ns', {}, (item) => items.push(item.metadata.name));
      kube.close();
      const https = process.moduleLoadList.includes('NativeModule https');
      process.stdout.write(JSON.stringify({ events, items, resourceVersion: meta.resourceVersion, https }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, URL: serverUrl, CA: ca },
    });
    return JSON.parse(stdout) as unknown;
  }

  it('watch and list item by item over TLS without loading node:https', async () => {
    hosts.length = 0;
    servernames.length = 0;
    assert.deepEqual(await watchAndList(url), {
      events: ['ADDED a', 'MODIFIED a'],
      items: ['b'],
      resourceVersion: '7',
      https: false,
    });
    // As https.request sends them: the Host header with the port, no SNI for an IP address.
    assert.deepEqual(hosts, [new URL(url).host, new URL(url).host]);
    assert.deepEqual([...new Set(servernames)], ['']);
  });

  it('sends the server name as SNI and verifies the certificate for it', async () => {
    hosts.length = 0;
    servernames.length = 0;
    const byName = url.replace('127.0.0.1', 'localhost');
    assert.deepEqual(await watchAndList(byName), {
      events: ['ADDED a', 'MODIFIED a'],
      items: ['b'],
      resourceVersion: '7',
      https: false,
    });
    assert.deepEqual(hosts, [new URL(byName).host, new URL(byName).host]);
    assert.deepEqual([...new Set(servernames)], ['localhost']);
  });

  it('rejects a server whose certificate the CA did not sign', async () => {
    const other = await loopbackServingCertificates(join(dir, 'other'));
    const script = `const { KubeClient, builtins: { configMaps } } = await import(${JSON.stringify(entry)});
      const kube = new KubeClient({ server: process.env.URL, ca: process.env.CA, qps: -1 });
      try { await kube.resource(configMaps).watch('ns', {}); process.stdout.write('connected'); }
      catch (err) { process.stdout.write(String(err.code ?? err.message)); }
      kube.close();`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, URL: url, CA: other.caCertPem },
    });
    assert.match(stdout, /CERT|SIGNATURE|verify|self.signed|issuer/i);
  });
});
