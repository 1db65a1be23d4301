import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { callApi, runCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * kube-apiserver's --service-cluster-ip-range and --service-node-port-range on `certkit apiserver`: Services get
 * their cluster IP and node ports from the given ranges, and a range that does not parse is refused at start.
 */
describe('certkit apiserver service ranges', () => {
  it('allocates cluster IPs and node ports from the ranges the flags give', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-ranges-'));
    const cli = await startCli([
      'apiserver',
      '--data-dir',
      dir,
      '--port',
      '0',
      '--service-cluster-ip-range',
      '10.96.0.0/16',
      '--service-node-port-range',
      '31000-31010',
    ]);
    try {
      const service = (name: string) =>
        callApi(dir, cli.url, 'POST', '/api/v1/namespaces/default/services', {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name },
          spec: { type: 'NodePort', ports: [{ port: 80 }] },
        });
      // Eleven ports in the range: all of them are handed out, each once, and none outside it.
      const ports = new Set<number>();
      for (let i = 0; i < 11; i++) {
        const created = await service(`web-${i}`);
        assert.equal(created.status, 201, JSON.stringify(created.json));
        const spec = created.json.spec as { clusterIP: string; ports: { nodePort: number }[] };
        assert.match(spec.clusterIP, /^10\.96\.\d+\.\d+$/);
        ports.add(spec.ports[0]!.nodePort);
      }
      assert.deepEqual(
        [...ports].sort((a, b) => a - b),
        Array.from({ length: 11 }, (_, i) => 31000 + i),
      );
      const full = await service('one-too-many');
      assert.equal(full.status, 422, JSON.stringify(full.json));
      assert.match(String(full.json.message), /range is full|no available/i);
    } finally {
      await cli.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses ranges that do not parse, in one line naming the flag', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-ranges-'));
    try {
      const cases: [string[], RegExp][] = [
        [
          ['--service-cluster-ip-range', 'ten'],
          /--service-cluster-ip-range: invalid service cluster IP range "ten"/,
        ],
        [['--service-cluster-ip-range', 'fd00::/108'], /--service-cluster-ip-range: .*only IPv4/],
        [['--service-node-port-range', '32000-31000'], /--service-node-port-range: invalid node port range/],
      ];
      for (const [flags, message] of cases) {
        const r = await runCli(['apiserver', '--data-dir', join(dir, 'data'), '--port', '0', ...flags]);
        assert.notEqual(r.code, 0, flags.join(' '));
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
