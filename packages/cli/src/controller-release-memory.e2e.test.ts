import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { callApi, CERTKIT_BIN, certkitEnv, startCli } from '@certkit/testenv/cli/cli-process';

const RELEASED = /"msg":"Released memory after a burst of reconciles"/g;

/**
 * `certkit controller` gives memory back once a burst of reconciles has ended (docs/adr/1141): once per
 * burst, logged at info, and never again while it idles.
 */
describe('certkit controller after a burst', () => {
  it('releases memory once, after issuing a batch of Certificates, and not while idle', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-release-'));
    // `up` installs the CRDs in the data dir; the API server alone then serves them, with no controller of its
    // own, so the one below is the only one reconciling.
    const up = await startCli(['up', '--data-dir', dir, '--port', '0']);
    await up.stop('SIGINT');
    const server = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
    const controller = spawn(
      process.execPath,
      [
        CERTKIT_BIN,
        'controller',
        ...['--kubeconfig', join(dir, 'kubeconfig'), '--leader-elect=false', '--metrics-bind-address=0'],
        '--log-level=info',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: certkitEnv() },
    );
    let log = '';
    controller.stderr!.on('data', (d) => (log += d));
    const released = () => log.match(RELEASED)?.length ?? 0;
    const api = (method: string, path: string, body?: unknown) =>
      callApi(dir, server.url, method, path, body);
    try {
      const base = '/apis/cert-manager.io/v1/namespaces/default';
      const issuer = await api('POST', `${base}/issuers`, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: 'self' },
        spec: { selfSigned: {} },
      });
      assert.equal(issuer.status, 201);
      // Eight issuances: well over the 50 reconciles that make a burst.
      for (let i = 0; i < 8; i++) {
        const created = await api('POST', `${base}/certificates`, {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: { name: `c${i}` },
          spec: {
            secretName: `c${i}-tls`,
            dnsNames: [`c${i}.example`],
            privateKey: { algorithm: 'ECDSA' },
            issuerRef: { name: 'self' },
          },
        });
        assert.equal(created.status, 201);
      }
      const deadline = Date.now() + 60_000;
      while (released() === 0) {
        assert.ok(Date.now() < deadline, `no release logged within 60 s:\n${log.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const ready = await api('GET', `${base}/certificates`);
      const items = ready.json.items as { status?: { conditions?: { type: string; status: string }[] } }[];
      assert.equal(
        items.filter((c) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))
          .length,
        8,
        'the release comes after the burst, with every Certificate issued',
      );
      const entry = JSON.parse(log.split('\n').find((l) => RELEASED.test(l) && !(RELEASED.lastIndex = 0))!);
      assert.ok(entry.rssBeforeMB > 0 && entry.rssAfterMB > 0 && entry.cpuMs >= 0, JSON.stringify(entry));
      // docs/adr/1143: the release ends with glibc's malloc_trim, through node:ffi.
      assert.equal(entry.mallocTrimmed, true, JSON.stringify(entry));
      // Idle now: more than its quiet period (8 s) passes without another.
      await new Promise((r) => setTimeout(r, 12_000));
      assert.equal(released(), 1, 'once per burst, nothing while idle');
    } finally {
      controller.kill('SIGTERM');
      await new Promise((resolve) => controller.once('exit', resolve));
      await server.stop('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
