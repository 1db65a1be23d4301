/**
 * ACME issuance through the real CLI: `certkit up` with the ACME flags (embedded HTTP-01 listener and its
 * self-check, --max-concurrent-challenges, the DNS-01 check servers and retry period) takes a Certificate on
 * an ACME Issuer to Ready against a real Pebble, which resolves names through a real BIND.
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { ACME_ZONE, acmeEnvironmentSkip } from '@certkit/testenv/acme/acme-environment';
import { startBind, type BindServer } from '@certkit/testenv/bind/bind';
import { callApi, startCli, type RunningCli } from '@certkit/testenv/cli/cli-process';
import { startPebble, type Pebble } from '@certkit/testenv/pebble/pebble';
import { freePort } from '@certkit/testenv/net/free-ports';

describe('certkit up issues from an ACME Issuer', { skip: acmeEnvironmentSkip() }, () => {
  let dir: string;
  let bind: BindServer;
  let pebble: Pebble;
  let cli: RunningCli;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-acme-cli-'));
    bind = await startBind({ zones: [{ name: ACME_ZONE, records: ['cli IN A 127.0.0.1'] }] });
    const port = await freePort();
    pebble = await startPebble({ dnsServer: bind.address, httpPort: port, authzReusePercent: 0 });
    cli = await startCli([
      'up',
      ...['--data-dir', dir, '--port', '0'],
      ...['--acme-http01-listen-address', `127.0.0.1:${port}`, '--acme-http01-self-check-port', String(port)],
      ...['--acme-http01-solver-nameservers', bind.address, '--max-concurrent-challenges', '2'],
      ...['--dns01-recursive-nameservers', bind.address, '--dns01-recursive-nameservers-only', 'true'],
      ...['--dns01-check-retry-period', '1s'],
    ]);
  });
  after(async () => {
    if (cli) assert.equal(await cli.stop('SIGTERM'), 0);
    await pebble?.stop();
    await bind?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const api = (method: string, path: string, body?: unknown) => callApi(dir, cli.url, method, path, body);
  const ns = 'default';
  const base = `/apis/cert-manager.io/v1/namespaces/${ns}`;

  async function waitFor(path: string, test: (obj: Record<string, any>) => boolean, what: string) {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { status, json } = await api('GET', path);
      if (status === 200 && test(json)) return json;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(json)}`);
      await sleep(250);
    }
  }
  const ready = (obj: Record<string, any>) =>
    (obj.status?.conditions ?? []).some(
      (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
    );

  it('takes an HTTP-01 Certificate to Ready, with the Order and Challenge kinds served', async () => {
    const issuer = await api('POST', `${base}/issuers`, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.caBundle).toString('base64'),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [{ http01: { ingress: {} } }],
        },
      },
    });
    assert.equal(issuer.status, 201, JSON.stringify(issuer.json));
    await waitFor(`${base}/issuers/pebble`, ready, 'the Issuer Ready');

    const cert = await api('POST', `${base}/certificates`, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'cli' },
      spec: { secretName: 'cli-tls', dnsNames: [`cli.${ACME_ZONE}`], issuerRef: { name: 'pebble' } },
    });
    assert.equal(cert.status, 201, JSON.stringify(cert.json));
    await waitFor(`${base}/certificates/cli`, ready, 'the Certificate Ready');

    const orders = await api('GET', `/apis/acme.cert-manager.io/v1/namespaces/${ns}/orders`);
    const items = orders.json.items as { status?: { state?: string } }[];
    assert.deepEqual(
      items.map((o) => o.status?.state),
      ['valid'],
    );
    const secret = await api('GET', `/api/v1/namespaces/${ns}/secrets/cli-tls`);
    const chain = Buffer.from((secret.json.data as Record<string, string>)['tls.crt'], 'base64').toString();
    assert.equal(chain.match(/BEGIN CERTIFICATE/g)?.length, 2, 'leaf and Pebble intermediate');
  });
});
