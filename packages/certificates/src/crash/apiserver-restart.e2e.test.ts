/**
 * The API server SIGKILLed in the middle of issuing 200 Certificates, kept down for a while, and restarted on
 * the same data dir and port. The controller (its own process, through the CLI) must ride it out as a client-go
 * controller does: its watches fail and are re-established after a bounded backoff, resuming from the
 * resourceVersion they had (or relisting), its queued work retried. Then:
 *
 * - every Certificate ends Ready at revision 1 with exactly one CertificateRequest: nothing was requested
 *   twice because a write's answer was lost with the server;
 * - no next-private-key Secret is left behind;
 * - the controller's RSS stays flat while the server is down (no queue or buffer grows with the retries);
 * - it picks the work up again within client-go's bounds after the server is back.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtins, KubeClient, loadKubeconfig } from '@certkit/runtime';
import type { Certificate, CertificateRequest } from '../api/types.ts';
import { certificateRequestsRef, certificatesRef } from '../controllers/refs.ts';
import {
  batchProblems,
  cpuSecondsOf,
  createBatch,
  createCertificate,
  installCertificateApi,
  readyCount,
  rssOf,
  waitForReady,
} from '@certkit/testenv/crash/batch';
import {
  type ApiServerProcess,
  type ControllerProcess,
  startApiServerProcess,
  startControllerProcess,
} from '@certkit/testenv/crash/processes';

const NS = 'restart';
const COUNT = 200;
/** Long enough for several of the controller's retry rounds to fail, and for RSS growth to show. */
const DOWN_MS = 6000;
/** RSS samples from this long after the kill on: what was in flight at the kill has settled by then. */
const SETTLE_MS = 1500;
/** client-go's reflector backoff tops out at 30 s; after a 6 s outage a retry is due far sooner. */
const RESUME_BOUND_MS = 20_000;
/**
 * More than the allocator's and the collector's noise, less than what a leak per retry would grow to: the 6 s
 * window read 2–7 MiB on a quiet machine, 8.5–11.9 beside two busy cores and 16.2 once within the whole e2e
 * run (the same before and after the change that first met it), as V8 collects later under load.
 */
const RSS_GROWTH_BOUND = 24 * 1024 * 1024;
/**
 * CPU the controller may use while it waits, in cores: retries backed off as client-go's (the reflector's
 * 800 ms doubling to 30 s, the workqueue's per-item 5 ms doubling) cost next to nothing; a retry loop
 * without backoff spins a core.
 */
const IDLE_CPU_BOUND = 0.25;

let server: ApiServerProcess | undefined;
let admin: KubeClient | undefined;
let controller: ControllerProcess | undefined;

before(async () => {
  server = await startApiServerProcess();
  admin = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  await installCertificateApi(admin);
  await createBatch(admin, NS, COUNT);
});

after(async () => {
  await controller?.kill();
  admin?.close();
  await server?.stop();
});

/** A Certificate's status and its CertificateRequests, for a failure's diagnostics. */
async function whatHappenedTo(name: string): Promise<string> {
  const cert = await admin!.resource<Certificate>(certificatesRef).get(NS, name);
  const requests = (await admin!.resource<CertificateRequest>(certificateRequestsRef).list(NS)).items;
  const own = requests.filter((cr) => cr.metadata.ownerReferences?.some((o) => o.name === name));
  const events = (await admin!.resource(builtins.events).list(NS)).items as {
    involvedObject?: { name?: string };
    reason?: string;
    message?: string;
  }[];
  return JSON.stringify({
    events: events.filter((e) => e.involvedObject?.name === name).map((e) => `${e.reason}: ${e.message}`),
    log: controller!
      .output()
      .split('\n')
      .filter((line) => line.includes(name)),
    status: cert.status,
    requests: own.map((cr) => ({ metadata: cr.metadata, conditions: cr.status?.conditions })),
  });
}

describe('the API server killed and restarted under the controller', () => {
  it(`issues all ${COUNT} Certificates once each, with flat RSS while the server is down`, async (t) => {
    const first = server!;
    controller = startControllerProcess(first.kubeconfigPath, [
      '--kube-api-qps=-1',
      '--concurrent-workers=5',
    ]);
    await controller.running;
    // Kill once some (not all) are Ready: mid-issuance, with the rest at every step of it.
    let readyAtKill = 0;
    while (readyAtKill < COUNT / 10) {
      await sleep(50);
      readyAtKill = (await readyCount(admin!, NS)) ?? readyAtKill;
    }
    await first.kill('SIGKILL');
    const killedAt = performance.now();
    assert.ok(readyAtKill < COUNT, 'the server was killed before the batch was done');

    const pid = controller.child.pid!;
    const samples: { atMs: number; rss: number; cpu: number }[] = [];
    while (performance.now() - killedAt < DOWN_MS) {
      const [rss, cpu] = await Promise.all([rssOf(pid), cpuSecondsOf(pid)]);
      samples.push({ atMs: performance.now() - killedAt, rss, cpu });
      await sleep(200);
    }
    assert.equal(controller.child.exitCode, null, `the controller exited:\n${controller.output()}`);
    const settledSamples = samples.filter((s) => s.atMs >= SETTLE_MS);
    const settled = settledSamples.map((s) => s.rss);
    const growth = Math.max(...settled.slice(-5)) - Math.max(...settled.slice(0, 5));
    const [firstSettled, lastSettled] = [settledSamples[0]!, settledSamples.at(-1)!];
    const idleCores = (lastSettled.cpu - firstSettled.cpu) / ((lastSettled.atMs - firstSettled.atMs) / 1000);
    assert.ok(
      idleCores < IDLE_CPU_BOUND,
      `the controller used ${idleCores.toFixed(2)} cores while the server was down`,
    );
    assert.ok(
      growth < RSS_GROWTH_BOUND,
      `controller RSS grew ${(growth / 2 ** 20).toFixed(1)} MiB while the server was down`,
    );

    server = await startApiServerProcess({ dataDir: first.dataDir, port: Number(new URL(first.url).port) });
    const restartedAt = performance.now();
    let resumedMs: number | undefined;
    for (;;) {
      const ready = await readyCount(admin!, NS);
      if (ready !== undefined && ready > readyAtKill) {
        resumedMs = performance.now() - restartedAt;
        break;
      }
      if (performance.now() - restartedAt > RESUME_BOUND_MS) break;
      await sleep(100);
    }
    assert.ok(
      resumedMs !== undefined,
      `no progress ${RESUME_BOUND_MS} ms after the restart:\n${controller.output()}`,
    );

    // A Certificate created after the restart is issued too: the controller's watches are live again
    // (resumed, or relisted after the restarted server's 410 Gone), not only its queued retries.
    await createCertificate(admin!, NS, 'after-restart');
    const ready = await waitForReady(admin!, NS, COUNT + 1, 60_000);
    assert.equal(ready, COUNT + 1, `${ready}/${COUNT + 1} Ready:\n${controller.output()}`);
    const problems = await batchProblems(admin!, NS);
    if (problems.length) t.diagnostic(await whatHappenedTo(problems[0].split(' ')[0]));
    assert.deepEqual(problems, []);
    assert.equal(controller.child.exitCode, null, 'the controller kept running throughout');

    const mib = (n: number) => (n / 2 ** 20).toFixed(1);
    t.diagnostic(
      `ready at kill ${readyAtKill}/${COUNT}; controller RSS while down ${mib(Math.min(...settled))}–` +
        `${mib(Math.max(...settled))} MiB (growth ${mib(growth)} MiB), CPU ${idleCores.toFixed(3)} cores; progress again ` +
        `${Math.round(resumedMs)} ms after the restart; all Ready ${Math.round(performance.now() - restartedAt)} ms after it`,
    );
  });
});
