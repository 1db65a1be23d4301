/**
 * Two `certkit controller --leader-elect` processes over the same 100 Certificates, with short Lease timings
 * (3 s lease, 2 s renew deadline, 500 ms retry period):
 *
 * - only the one holding the Lease works: the other starts its controllers only after it took the Lease over;
 * - the leader SIGKILLed mid-issuance: the other takes over once the Lease has expired, and carries on;
 * - the API server gone for longer than the Lease: the leader cannot renew within its renew deadline and exits
 *   with status 1, as controller-runtime's manager does (a Deployment restarts it); the API server back, a
 *   controller takes the Lease and finishes;
 * - in the end every Certificate was issued exactly once (one CertificateRequest, revision 1).
 */

import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtins, KubeClient, loadKubeconfig } from '@certkit/runtime';
import {
  batchProblems,
  createBatch,
  installCertificateApi,
  readyCount,
  waitForReady,
} from '@certkit/testenv/crash/batch';
import {
  type ApiServerProcess,
  type ControllerProcess,
  startApiServerProcess,
  startControllerProcess,
} from '@certkit/testenv/crash/processes';

const NS = 'leaders';
const COUNT = 100;
const LEASE_MS = 3000;
const RENEW_DEADLINE_MS = 2000;
const RETRY_MS = 500;
/** Scheduling slack on a loaded machine. */
const MARGIN_MS = 1500;
const FLAGS = [
  '--leader-elect=true',
  '--leader-election-namespace=default',
  '--leader-election-lease-duration=3s',
  '--leader-election-renew-deadline=2s',
  '--leader-election-retry-period=500ms',
  '--kube-api-qps=-1',
  '--concurrent-workers=5',
  // Info entries: the elector's "successfully acquired lease".
  '-v=2',
];

let server: ApiServerProcess | undefined;
let admin: KubeClient | undefined;
const controllers: ControllerProcess[] = [];
/** The controllers that have logged taking the Lease (their output keeps only a tail, so it is noted here). */
const leaders = new Set<ControllerProcess>();

function startController(kubeconfig: string): ControllerProcess {
  const controller = startControllerProcess(kubeconfig, FLAGS);
  createInterface({ input: controller.child.stderr! }).on('line', (line) => {
    if (line.includes('"successfully acquired lease"')) leaders.add(controller);
  });
  controllers.push(controller);
  return controller;
}

const leading = (c: ControllerProcess) => leaders.has(c);
const alive = (c: ControllerProcess) => c.child.exitCode === null && c.child.signalCode === null;

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(performance.now() < deadline, `timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

async function readyAtLeast(n: number): Promise<boolean> {
  return ((await readyCount(admin!, NS)) ?? 0) >= n;
}

before(async () => {
  server = await startApiServerProcess();
  admin = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  await installCertificateApi(admin);
  await createBatch(admin, NS, COUNT);
});

after(async () => {
  for (const c of controllers) await c.kill();
  admin?.close();
  await server?.stop();
});

describe('controllers with --leader-elect', () => {
  it('one works at a time, through a leader SIGKILL and an API server outage longer than the Lease', async (t) => {
    const kubeconfig = server!.kubeconfigPath;
    const [a, b] = [startController(kubeconfig), startController(kubeconfig)];
    await Promise.all([a.running, b.running]);
    await until('a leader', () => leading(a) || leading(b), 20_000).catch((err) => {
      throw new Error(`${err.message}:\n${a.output()}\n${b.output()}`);
    });
    await until('issuance under way', () => readyAtLeast(15), 30_000);
    const [leader, follower] = leading(a) ? [a, b] : [b, a];
    assert.ok(!leading(follower), 'only one controller leads');
    const lease = await admin!.resource(builtins.leases).get('default', 'certkit-controller');
    assert.equal(
      (lease.spec as { holderIdentity?: string }).holderIdentity?.endsWith(`_${leader.child.pid}`),
      true,
    );

    // 1. The leader killed mid-issuance: the follower takes over once the Lease has expired.
    const readyAtKill = (await readyCount(admin!, NS))!;
    assert.ok(readyAtKill < COUNT, 'the leader was killed mid-issuance');
    await leader.kill('SIGKILL');
    const killedAt = performance.now();
    await until(
      'the follower to take over',
      () => leading(follower),
      LEASE_MS + 2 * RETRY_MS + MARGIN_MS * 2,
    );
    const takeoverMs = performance.now() - killedAt;
    assert.ok(
      takeoverMs > LEASE_MS - RETRY_MS - MARGIN_MS,
      `took over after ${takeoverMs} ms: before expiry`,
    );
    // A replacement for the killed one, as its Deployment would start: it follows.
    const standby = startController(kubeconfig);
    await standby.running;
    await until('progress after the takeover', () => readyAtLeast(readyAtKill + 1), 20_000);

    // 2. The API server gone for longer than the Lease, mid-issuance: the leader steps down by exiting 1.
    const readyAtOutage = (await readyCount(admin!, NS))!;
    const first = server!;
    await first.kill('SIGKILL');
    const downAt = performance.now();
    const exitCode = await Promise.race([
      follower.exited.then(() => follower.child.exitCode),
      sleep(RENEW_DEADLINE_MS + RETRY_MS + LEASE_MS + MARGIN_MS, undefined, { ref: false }).then(
        () => 'still running' as const,
      ),
    ]);
    const steppedDownMs = performance.now() - downAt;
    assert.equal(exitCode, 1, `the leader exits 1 on losing the Lease:\n${follower.output()}`);
    assert.match(follower.output(), /leader election lost; exiting/);
    assert.ok(alive(standby), `the standby survives the outage:\n${standby.output()}`);
    await sleep(Math.max(0, LEASE_MS + 500 - steppedDownMs));
    server = await startApiServerProcess({ dataDir: first.dataDir, port: Number(new URL(first.url).port) });
    // The restarted leader, as its Deployment would start it again.
    startController(kubeconfig);
    await until('a new leader', () => leading(standby) || leading(controllers.at(-1)!), 20_000);

    const ready = await waitForReady(admin!, NS, COUNT, 60_000);
    assert.equal(ready, COUNT, `${ready}/${COUNT} Ready`);
    assert.deepEqual(await batchProblems(admin!, NS), []);
    const leaders = controllers.filter(leading).length;
    assert.equal(
      leaders,
      3,
      'three controllers led in turn: the first, the follower, then one after the outage',
    );
    assert.ok(controllers.filter(alive).filter(leading).length === 1, 'one leader at the end');
    t.diagnostic(
      `ready at the leader's kill ${readyAtKill}/${COUNT}, takeover after ${Math.round(takeoverMs)} ms; ` +
        `ready at the outage ${readyAtOutage}; the leader exited ${Math.round(steppedDownMs)} ms into it`,
    );
  });
});
