/**
 * `certkit controller` pointed at a `certkit up` (with the kubeconfig up writes) stands by on the leader Lease
 * that up holds, and says so, instead of reconciling every Certificate beside up's own controller; once up has
 * stopped cleanly, the Lease is free and a controller against `certkit apiserver` on the same data leads at
 * once, without a standing-by line.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CERTKIT_BIN, callApi, certkitEnv, startCli } from '@certkit/testenv/cli/cli-process';

/** A `certkit controller` process and what it has printed so far. */
function startController(kubeconfig: string): {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  stop(): Promise<number | null>;
} {
  const child = spawn(
    process.execPath,
    [CERTKIT_BIN, 'controller', '--kubeconfig', kubeconfig, '--metrics-bind-address', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: certkitEnv() },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

async function until(
  what: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/certkit-controller';

describe('certkit controller against certkit up', () => {
  let dir: string;
  let dataDir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-up-lease-'));
    dataDir = join(dir, 'data');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stands by while up holds the Lease, and says so after its banner', async () => {
    const up = await startCli(['up', '--data-dir', dataDir, '--port', '0']);
    const controller = startController(join(dataDir, 'kubeconfig'));
    try {
      const lease = await callApi(dataDir, up.url, 'GET', LEASE);
      assert.equal(lease.status, 200);
      const spec = lease.json.spec as { holderIdentity: string; leaseDurationSeconds: number };
      assert.match(spec.holderIdentity, new RegExp(`_certkit-up_${up.child.pid}$`));
      assert.equal(spec.leaseDurationSeconds, 60);

      await until('the standing-by line', () => controller.stdout().split('\n').length >= 3);
      const [banner, standingBy] = controller.stdout().split('\n');
      assert.match(banner, /^certkit controller: watching all namespaces on https:\/\/127\.0\.0\.1:\d+ /);
      assert.equal(
        standingBy,
        `certkit controller: standing by: ${spec.holderIdentity} holds the leader Lease ` +
          'kube-system/certkit-controller; this one leads when it stops renewing it (that is a certkit up, ' +
          'which runs the certificate controller itself; for a cluster without one, run certkit apiserver)',
      );
      // Standing by: the Lease still names up.
      const after = await callApi(dataDir, up.url, 'GET', LEASE);
      assert.equal((after.json.spec as { holderIdentity: string }).holderIdentity, spec.holderIdentity);
    } finally {
      assert.equal(await controller.stop(), 0, controller.stderr());
      assert.equal(await up.stop('SIGTERM'), 0);
    }
  });

  it('after a clean stop of up the Lease is free: a controller against apiserver leads at once', async () => {
    const server = await startCli(['apiserver', '--data-dir', dataDir, '--port', '0']);
    const released = await callApi(dataDir, server.url, 'GET', LEASE);
    assert.equal((released.json.spec as { holderIdentity?: string }).holderIdentity ?? '', '');
    const controller = startController(join(dataDir, 'kubeconfig'));
    try {
      await until('the controller to take the Lease', async () => {
        const lease = await callApi(dataDir, server.url, 'GET', LEASE);
        const holder = (lease.json.spec as { holderIdentity?: string }).holderIdentity ?? '';
        return holder.endsWith(`_${controller.child.pid}`) && !holder.includes('_certkit-up_');
      });
      assert.match(
        controller.stdout(),
        /^certkit controller: watching all namespaces on \S+ \(leader election in kube-system\)\n$/,
      );
    } finally {
      assert.equal(await controller.stop(), 0, controller.stderr());
      assert.equal(await server.stop('SIGTERM'), 0);
    }
  });
});
