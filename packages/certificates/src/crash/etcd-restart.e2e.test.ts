/**
 * `certkit apiserver --storage etcd` with its etcd SIGKILLed in the middle of issuing 100 Certificates, kept
 * down a few seconds and restarted on the same data. While etcd is down the API server must stay up and
 * answer, as kube-apiserver does: a write fails with a 5xx Status (or 429 with Retry-After) within the
 * request timeout rather than hanging, and nothing crashes. With etcd back, the controller (which never
 * stopped) finishes: every Certificate Ready, each issued exactly once.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError } from '@certkit/apimachinery';
import { builtins, KubeClient, loadKubeconfig } from '@certkit/runtime';
import { etcdAvailable, type EtcdProcess, startEtcd } from '@certkit/testenv/etcd/etcd';
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

const skip = etcdAvailable() ? false : 'etcd is not installed (CI installs Debian etcd-server)';
if (skip) console.log(`# skipping the etcd restart test: ${skip}`);

const NS = 'etcd-restart';
const COUNT = 100;
const DOWN_MS = 4000;
/** kube-apiserver's default --request-timeout is 60 s; an answer must come well within it. */
const ANSWER_BOUND_MS = 60_000;

let etcd: EtcdProcess | undefined;
let server: ApiServerProcess | undefined;
let admin: KubeClient | undefined;
let controller: ControllerProcess | undefined;

before(async () => {
  if (skip) return;
  etcd = await startEtcd();
  server = await startApiServerProcess({ args: ['--storage', 'etcd', '--etcd-endpoints', etcd.endpoint] });
  admin = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  await installCertificateApi(admin);
  await createBatch(admin, NS, COUNT);
});

after(async () => {
  await controller?.kill();
  admin?.close();
  await server?.stop();
  await etcd?.cleanup();
});

describe('etcd killed and restarted under the API server', { skip }, () => {
  it(`answers while etcd is down and issues all ${COUNT} Certificates once each after`, async (t) => {
    controller = startControllerProcess(server!.kubeconfigPath, [
      '--kube-api-qps=-1',
      '--concurrent-workers=5',
    ]);
    await controller.running;
    let readyAtKill = 0;
    while (readyAtKill < COUNT / 10) {
      await sleep(50);
      readyAtKill = (await readyCount(admin!, NS)) ?? readyAtKill;
    }
    await etcd!.kill();
    const killedAt = performance.now();
    assert.ok(readyAtKill < COUNT, 'etcd was killed before the batch was done');

    // One write while etcd is down, answered as it is (no client retries): an error Status, not a hang.
    const { kubeconfigPath } = server!;
    const probe = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfigPath })), maxRetries: 0 });
    const started = performance.now();
    const answer = await Promise.race([
      probe
        .resource(builtins.configMaps)
        .create(NS, { metadata: { name: 'while-etcd-is-down' }, data: { a: '1' } })
        .then(
          () => 'written' as const,
          (err: unknown) => err,
        ),
      sleep(ANSWER_BOUND_MS, undefined, { ref: false }).then(() => 'no answer' as const),
    ]);
    const answeredMs = performance.now() - started;
    probe.close();
    assert.ok(answer instanceof StatusError, `a Status error while etcd is down, got ${String(answer)}`);
    const code = answer.status.code ?? 0;
    assert.ok(code >= 500 || code === 429, `a 5xx or 429 answer, got ${code}: ${answer.message}`);
    assert.ok(server!.alive(), 'the API server is still running');

    await sleep(Math.max(0, DOWN_MS - (performance.now() - killedAt)));
    await etcd!.restart();
    const ready = await waitForReady(admin!, NS, COUNT, 60_000);
    assert.equal(ready, COUNT, `${ready}/${COUNT} Ready:\n${controller.output()}`);
    assert.deepEqual(await batchProblems(admin!, NS), []);
    assert.equal(controller.child.exitCode, null, 'the controller kept running throughout');
    t.diagnostic(
      `ready at the kill ${readyAtKill}/${COUNT}; a write while etcd was down answered ${code} ` +
        `(${answer.status.reason}) after ${Math.round(answeredMs)} ms: ${answer.message}`,
    );
  });
});
