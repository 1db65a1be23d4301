import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { LEADER_PROCESS_SCRIPT } from '@certkit/testenv/processes/scripts';
import { eventually } from '@certkit/testenv/eventually';

/** Must match @certkit/testenv/processes/leader-process.ts. */
const LEASE_MS = 3000;
const RETRY_MS = 200;
const RENEW_DEADLINE_MS = 2000;
const MAX_RETRY_WAIT_MS = RETRY_MS * 2.2;
const MARGIN_MS = 500;

const fixture = LEADER_PROCESS_SCRIPT;

interface Replica {
  identity: string;
  child: ChildProcess;
  /** performance.now() of its first "leading" line. */
  leadingAt?: number;
  started: Promise<void>;
}

function spawnReplica(kubeconfig: string, identity: string): Replica {
  const child = spawn(process.execPath, [fixture, kubeconfig, identity, 'multi-process'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = Promise.withResolvers<void>();
  const replica: Replica = { identity, child, started: started.promise };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const msg = JSON.parse(line);
    if (msg.started) started.resolve();
    if (msg.leading) replica.leadingAt ??= performance.now();
  });
  return replica;
}

describe('leader election across processes', () => {
  let server: TestServer;
  const replicas: Replica[] = [];

  before(async () => {
    server = await startTestServer();
  });

  after(async () => {
    for (const r of replicas)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    await server?.close();
  });

  it('one replica leads; after SIGKILL the other takes over within the lease duration; losing the lease exits', async (t) => {
    replicas.push(
      spawnReplica(server.kubeconfigPath, 'replica-1'),
      spawnReplica(server.kubeconfigPath, 'replica-2'),
    );
    await Promise.all(replicas.map((r) => r.started));
    await eventually(() => replicas.some((r) => r.leadingAt !== undefined), 'a replica to lead', 10_000, 10);
    // Long enough for a stale lease to have been stolen if renewals were not working.
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));
    const leaders = replicas.filter((r) => r.leadingAt !== undefined);
    assert.equal(leaders.length, 1, 'exactly one replica leads');
    const [leader] = leaders;
    const follower = replicas.find((r) => r !== leader)!;

    const exited = once(leader.child, 'exit');
    const killed = performance.now();
    leader.child.kill('SIGKILL');
    await exited;
    // The follower may see the last renewal up to one (jittered) retry after it happened, and needs up to
    // one more retry to notice the lease has expired: lease + 2 retry waits, plus scheduling slack.
    const bound = LEASE_MS + 2 * MAX_RETRY_WAIT_MS + MARGIN_MS;
    await eventually(() => follower.leadingAt !== undefined, 'the follower to take over', bound + 2000, 10);
    const takeover = follower.leadingAt! - killed;
    t.diagnostic(`takeover after SIGKILL: ${Math.round(takeover)} ms`);
    assert.ok(takeover < bound, `took over after ${Math.round(takeover)} ms (bound ${bound} ms)`);
    assert.ok(
      takeover > LEASE_MS - RETRY_MS - MARGIN_MS,
      `took over after ${Math.round(takeover)} ms: before expiry`,
    );

    const res = await server.fetch(
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases/multi-process',
    );
    assert.equal(res.json.spec.holderIdentity, follower.identity);
    assert.equal(res.json.spec.leaseTransitions, 1);

    // Losing the lease exits the process (status 1), as controller-runtime's default does.
    const survivorExit = once(follower.child, 'exit');
    const leasePath = '/apis/coordination.k8s.io/v1/namespaces/default/leases/multi-process';
    for (let attempt = 0; ; attempt++) {
      assert.ok(attempt < 10, 'could not take the lease');
      const current = (await server.fetch('GET', leasePath)).json;
      const put = await server.fetch('PUT', leasePath, {
        body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 } },
      });
      if (put.status === 200) break;
      assert.equal(put.status, 409, put.text);
    }
    const stolen = performance.now();
    assert.deepEqual(await survivorExit, [1, null]);
    const exitedAfter = performance.now() - stolen;
    t.diagnostic(`exited ${Math.round(exitedAfter)} ms after losing the lease`);
    assert.ok(
      exitedAfter < RENEW_DEADLINE_MS + RETRY_MS + MARGIN_MS,
      `exited after ${Math.round(exitedAfter)} ms`,
    );
  });
});
