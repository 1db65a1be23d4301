import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { formatMicroTime } from '@certkit/apimachinery';
import { KubeClient } from '../client/kube-client.ts';
import { loadKubeconfig } from '../client/kubeconfig.ts';
import type { ResourceClient } from '../client/types.ts';
import { LEASE_RESOURCE, LeaderElector, type Lease } from './leader-election.ts';
import type { LogEntry } from '../log.ts';
import { eventually } from '@certkit/testenv/eventually';

/** Short timings, as client-go's tests use: leaseDuration > renewDeadline > 1.2 · retryPeriod. */
const LEASE_MS = 2000;
const RENEW_DEADLINE_MS = 1500;
const RETRY_MS = 200;
/** The longest an acquire attempt waits: retryPeriod · (1 + 1.2) of jitter. */
const MAX_RETRY_WAIT_MS = RETRY_MS * 2.2;
/** Slack for request latency and timer scheduling on a busy test machine. */
const MARGIN_MS = 400;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Candidate {
  identity: string;
  elector: LeaderElector;
  abort: AbortController;
  run: Promise<void>;
  startedAt?: number;
  stoppedAt?: number;
  leadingSignal?: AbortSignal;
  newLeaders: string[];
  logs: LogEntry[];
}

describe('LeaderElector (unit)', () => {
  it('formats MicroTime with six fractional digits', () => {
    assert.equal(
      formatMicroTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678))),
      '2026-01-02T03:04:05.678000Z',
    );
  });

  it('validates timings as client-go does', () => {
    const base = {
      client: {} as ResourceClient<Lease>,
      namespace: 'default',
      name: 'x',
      identity: 'a',
      callbacks: { onStartedLeading: () => {} },
    };
    assert.throws(
      () => new LeaderElector({ ...base, leaseDurationMs: 10_000 }),
      /leaseDuration must be greater than renewDeadline/,
    );
    assert.throws(
      () => new LeaderElector({ ...base, renewDeadlineMs: 2000, retryPeriodMs: 2000 }),
      /renewDeadline must be greater than retryPeriod\*JitterFactor/,
    );
    assert.throws(() => new LeaderElector({ ...base, identity: '' }), /identity/);
    assert.ok(new LeaderElector(base), 'defaults 15 s / 10 s / 2 s are valid');
  });
});

describe('LeaderElector against the embedded API server', () => {
  let server: TestServer;
  const clients: KubeClient[] = [];
  const running: Candidate[] = [];

  before(async () => {
    server = await startTestServer();
  });

  after(async () => {
    for (const c of running) c.abort.abort();
    await Promise.allSettled(running.map((c) => c.run));
    for (const c of clients) c.close();
    await server?.close();
  });

  async function leaseClient(ts: TestServer = server): Promise<ResourceClient<Lease>> {
    const config = await loadKubeconfig({ path: ts.kubeconfigPath });
    // No client-side rate limit: controller-runtime's default (QPS -1), and retries every 200 ms need it.
    const client = new KubeClient({ ...config, qps: -1 });
    clients.push(client);
    return client.resource<Lease>(LEASE_RESOURCE);
  }

  async function candidate(
    identity: string,
    lease: string,
    options: { releaseOnCancel?: boolean; workAfterAbortMs?: number; ts?: TestServer } = {},
  ): Promise<Candidate> {
    const c: Candidate = {
      identity,
      abort: new AbortController(),
      newLeaders: [],
      logs: [],
    } as unknown as Candidate;
    c.elector = new LeaderElector({
      client: await leaseClient(options.ts),
      namespace: 'default',
      name: lease,
      identity,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_DEADLINE_MS,
      retryPeriodMs: RETRY_MS,
      releaseOnCancel: options.releaseOnCancel,
      log: (e) => c.logs.push(e),
      callbacks: {
        onStartedLeading: async (signal) => {
          c.startedAt = performance.now();
          c.leadingSignal = signal;
          if (options.workAfterAbortMs === undefined) return;
          // Work that takes a while to wind down after leadership ends.
          await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
          await sleep(options.workAfterAbortMs);
        },
        onStoppedLeading: () => {
          c.stoppedAt = performance.now();
        },
        onNewLeader: (id) => c.newLeaders.push(id),
      },
    });
    c.run = c.elector.run(c.abort.signal);
    running.push(c);
    return c;
  }

  async function readLease(name: string): Promise<Lease> {
    const res = await server.fetch('GET', `/apis/coordination.k8s.io/v1/namespaces/default/leases/${name}`);
    assert.equal(res.status, 200, res.text);
    return res.json as Lease;
  }

  it('elects exactly one leader and records it in the Lease', async () => {
    const a = await candidate('a', 'one-leader');
    const b = await candidate('b', 'one-leader');
    await eventually(() => a.elector.isLeader || b.elector.isLeader, 'a leader', 2000, 5);
    // Several renewals and a full lease duration later, still exactly one.
    await sleep(LEASE_MS + 200);
    assert.equal(Number(a.elector.isLeader) + Number(b.elector.isLeader), 1);
    const [leader, follower] = a.elector.isLeader ? [a, b] : [b, a];
    assert.equal(follower.startedAt, undefined, 'the follower never led');
    assert.deepEqual(follower.newLeaders, [leader.identity]);
    assert.deepEqual(leader.newLeaders, [leader.identity]);

    const lease = await readLease('one-leader');
    assert.equal(lease.spec?.holderIdentity, leader.identity);
    assert.equal(lease.spec?.leaseDurationSeconds, 2);
    assert.equal(lease.spec?.leaseTransitions, 0);
    assert.match(lease.spec?.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(lease.spec?.acquireTime ?? '', /\.\d{6}Z$/);
    assert.ok(
      Date.parse(lease.spec!.renewTime!) > Date.parse(lease.spec!.acquireTime!),
      'renewed since acquired',
    );

    a.abort.abort();
    b.abort.abort();
    await Promise.all([a.run, b.run]);
  });

  it('hands over after the lease expires when the leader stops without releasing', async (t) => {
    const a = await candidate('a', 'no-release');
    await eventually(() => a.elector.isLeader, 'a to lead', 2000, 5);
    const b = await candidate('b', 'no-release');
    await sleep(3 * RETRY_MS); // b observes a's renewals
    const stopped = performance.now();
    a.abort.abort();
    await a.run;
    assert.ok(a.leadingSignal?.aborted);
    assert.ok(a.stoppedAt !== undefined);
    // b may see a's last renewal up to one retry after it happened, then needs up to one more retry to
    // notice expiry.
    const bound = LEASE_MS + 2 * MAX_RETRY_WAIT_MS + MARGIN_MS;
    await eventually(() => b.elector.isLeader, 'b to take over', bound, 5);
    const takeover = b.startedAt! - stopped;
    t.diagnostic(`takeover without release: ${Math.round(takeover)} ms`);
    // b waits out the lease, measured from the last renewal it saw (at most one retry period before stop).
    assert.ok(takeover >= LEASE_MS - RETRY_MS - MARGIN_MS, `took over after ${takeover} ms: too early`);
    assert.ok(takeover < bound, `took over after ${takeover} ms`);
    const lease = await readLease('no-release');
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.ok(b.newLeaders.includes('a') && b.newLeaders.at(-1) === 'b');
    b.abort.abort();
    await b.run;
  });

  it('releases on clean stop after the leader work has wound down; the next takes over within a retry period', async (t) => {
    const a = await candidate('a', 'release', { releaseOnCancel: true, workAfterAbortMs: 300 });
    await eventually(() => a.elector.isLeader, 'a to lead', 2000, 5);
    const b = await candidate('b', 'release', { releaseOnCancel: true });
    await sleep(3 * RETRY_MS);
    a.abort.abort();
    await a.run;
    const released = performance.now();
    const afterRelease = await readLease('release');
    assert.equal(afterRelease.spec?.holderIdentity, '');
    assert.equal(afterRelease.spec?.leaseDurationSeconds, 1);
    assert.equal(afterRelease.spec?.leaseTransitions, 0);
    assert.ok(!b.elector.isLeader, 'b did not lead while a wound down (a kept renewing)');
    await eventually(() => b.elector.isLeader, 'b to take over', MAX_RETRY_WAIT_MS + MARGIN_MS, 5);
    t.diagnostic(`takeover after release: ${Math.round(b.startedAt! - released)} ms`);
    assert.ok(b.startedAt! - released < MAX_RETRY_WAIT_MS + MARGIN_MS);
    const lease = await readLease('release');
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.equal(lease.spec?.leaseDurationSeconds, 2);

    // And back again: transitions keep counting.
    const c = await candidate('c', 'release', { releaseOnCancel: true });
    b.abort.abort();
    await b.run;
    await eventually(() => c.elector.isLeader, 'c to take over', MAX_RETRY_WAIT_MS + MARGIN_MS + 500, 5);
    assert.equal((await readLease('release')).spec?.leaseTransitions, 2);
    c.abort.abort();
    await c.run;
  });

  it('stops leading within the renew deadline when someone else replaces the lease', async (t) => {
    const a = await candidate('a', 'stolen');
    await eventually(() => a.elector.isLeader, 'a to lead', 2000, 5);
    // Deleted and recreated by someone else. The leader may recreate it in between (an absent lease is
    // free to take), in which case the intruder tries again.
    for (let attempt = 0; ; attempt++) {
      assert.ok(attempt < 10, 'could not replace the lease');
      const del = await server.fetch(
        'DELETE',
        '/apis/coordination.k8s.io/v1/namespaces/default/leases/stolen',
      );
      assert.ok(del.status === 200 || del.status === 404, del.text);
      const now = formatMicroTime(new Date());
      const created = await server.fetch('POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'stolen', namespace: 'default' },
          spec: {
            holderIdentity: 'intruder',
            leaseDurationSeconds: 30,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 7,
          },
        },
      });
      if (created.status === 201) break;
      assert.equal(created.status, 409, created.text);
    }
    const replaced = performance.now();
    await eventually(
      () => a.stoppedAt !== undefined,
      'a to stop leading',
      RETRY_MS + RENEW_DEADLINE_MS + MARGIN_MS,
      5,
    );
    t.diagnostic(`stopped leading ${Math.round(a.stoppedAt! - replaced)} ms after the lease was replaced`);
    assert.ok(a.stoppedAt! - replaced < RETRY_MS + RENEW_DEADLINE_MS + MARGIN_MS);
    assert.ok(a.leadingSignal?.aborted);
    assert.equal(a.elector.isLeader, false);
    await a.run; // run returns on its own after losing
    assert.ok(a.logs.some((e) => e.level === 'error' && /leadership lost/.test(e.msg)));
    assert.equal((await readLease('stolen')).spec?.holderIdentity, 'intruder', 'a never overwrote it');
  });

  it('stops leading within the renew deadline when the API server goes away', async (t) => {
    const own = await startTestServer();
    let closed = false;
    try {
      const a = await candidate('a', 'server-gone', { ts: own });
      await eventually(() => a.elector.isLeader, 'a to lead', 2000, 5);
      await sleep(RETRY_MS);
      await own.close();
      closed = true;
      const gone = performance.now();
      await eventually(
        () => a.stoppedAt !== undefined,
        'a to stop leading',
        RETRY_MS + RENEW_DEADLINE_MS + MARGIN_MS,
        5,
      );
      t.diagnostic(`stopped leading ${Math.round(a.stoppedAt! - gone)} ms after the server closed`);
      assert.ok(a.stoppedAt! - gone < RETRY_MS + RENEW_DEADLINE_MS + MARGIN_MS);
      await a.run;
    } finally {
      if (!closed) await own.close();
    }
  });
});
