import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Controller,
  parseRequestKey,
  requestKey,
  TerminalError,
  type ControllerOptions,
  type Request,
} from './controller.ts';
import type { LogEntry } from '../log.ts';
import { MetricsRegistry } from './metrics.ts';
import { eventually } from '@certkit/testenv/eventually';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A controller with its own registry and a captured log, started at once. */
function startController(options: Omit<ControllerOptions, 'name'> & { name?: string }) {
  const logs: LogEntry[] = [];
  const metrics = new MetricsRegistry();
  const controller = new Controller({ name: 'test', metrics, log: (e) => logs.push(e), ...options });
  const abort = new AbortController();
  const running = controller.start(abort.signal);
  return { controller, logs, metrics, abort, running, stop: () => (abort.abort(), running) };
}

describe('request keys', () => {
  it('round-trips namespaced and cluster-scoped requests', () => {
    assert.equal(requestKey({ namespace: 'ns', name: 'a' }), 'ns/a');
    assert.equal(requestKey({ name: 'a' }), 'a');
    assert.deepEqual(parseRequestKey('ns/a'), { namespace: 'ns', name: 'a' });
    assert.deepEqual(parseRequestKey('a'), { name: 'a' });
  });
});

describe('Controller', () => {
  it('runs at most maxConcurrentReconciles at once, and never one object twice at once', async () => {
    let active = 0;
    let maxActive = 0;
    const activeKeys = new Set<string>();
    let overlaps = 0;
    const seen: string[] = [];
    const t = startController({
      maxConcurrentReconciles: 3,
      async reconcile(req) {
        const key = requestKey(req);
        if (activeKeys.has(key)) overlaps++;
        activeKeys.add(key);
        active++;
        maxActive = Math.max(maxActive, active);
        seen.push(key);
        await sleep(15);
        active--;
        activeKeys.delete(key);
      },
    });
    for (let i = 0; i < 9; i++) t.controller.enqueue({ namespace: 'ns', name: `o${i}` });
    // Re-adds of a busy object collapse into one rerun after it finishes.
    await sleep(5);
    t.controller.enqueue({ namespace: 'ns', name: 'o0' });
    t.controller.enqueue({ namespace: 'ns', name: 'o0' });
    await eventually(() => seen.length === 10, 'seen.length === 10', 2_000, 2);
    await sleep(40);
    await t.stop();
    assert.equal(maxActive, 3);
    assert.equal(overlaps, 0);
    assert.equal(seen.length, 10);
    assert.equal(seen.filter((k) => k === 'ns/o0').length, 2);
    const m = t.metrics.render();
    assert.match(m, /controller_runtime_reconcile_total\{controller="test",result="success"\} 10/);
    assert.match(m, /controller_runtime_max_concurrent_reconciles\{controller="test"\} 3/);
  });

  it('retries errors with growing backoff, then forgets on success', async () => {
    const times: number[] = [];
    const t = startController({
      async reconcile() {
        times.push(performance.now());
        if (times.length <= 4) throw new Error(`boom ${times.length}`);
      },
    });
    t.controller.enqueue({ namespace: 'ns', name: 'a' });
    await eventually(() => times.length === 5, 'times.length === 5', 2_000, 2);
    await sleep(5);
    const gaps = times.slice(1).map((x, i) => x - times[i]);
    // 5, 10, 20, 40 ms of per-item backoff (timers never fire early; allow 1 ms of clock rounding).
    [5, 10, 20, 40].forEach((want, i) => assert.ok(gaps[i] >= want - 1, `gap ${i} = ${gaps[i]} < ${want}`));
    assert.equal(t.controller.queue.numRequeues('ns/a'), 0, 'success forgets the backoff');
    await t.stop();
    const errors = t.logs.filter((e) => e.level === 'error');
    assert.equal(errors.length, 4);
    assert.deepEqual(
      { msg: errors[0].msg, namespace: errors[0].namespace, name: errors[0].name, err: errors[0].err },
      { msg: 'Reconciler error', namespace: 'ns', name: 'a', err: 'boom 1' },
    );
    const m = t.metrics.render();
    assert.match(m, /controller_runtime_reconcile_errors_total\{controller="test"\} 4/);
    assert.match(m, /controller_runtime_reconcile_total\{controller="test",result="error"\} 4/);
    assert.match(m, /controller_runtime_reconcile_total\{controller="test",result="success"\} 1/);
    assert.match(m, /workqueue_retries_total\{name="test",controller="test"\} 4/);
    assert.match(m, /controller_runtime_reconcile_time_seconds_count\{controller="test"\} 5/);
  });

  it('honours requeueAfter and resets the backoff', async () => {
    const times: number[] = [];
    const t = startController({
      async reconcile() {
        times.push(performance.now());
        if (times.length === 1) throw new Error('first fails');
        if (times.length === 2) return { requeueAfter: 60 };
      },
    });
    t.controller.enqueue({ name: 'cluster-scoped' });
    await eventually(() => times.length === 3, 'times.length === 3', 2_000, 2);
    assert.ok(times[2] - times[1] >= 59, `requeued after ${times[2] - times[1]} ms`);
    assert.equal(t.controller.queue.numRequeues('cluster-scoped'), 0);
    await t.stop();
    assert.match(t.metrics.render(), /result="requeue_after"\} 1/);
  });

  it('requeue: true goes through the rate limiter', async () => {
    let calls = 0;
    const t = startController({
      reconcile: () => (++calls < 3 ? { requeue: true } : undefined),
    });
    t.controller.enqueue({ name: 'a' });
    await eventually(() => calls === 3, 'calls === 3', 2_000, 2);
    await t.stop();
    assert.match(t.metrics.render(), /result="requeue"\} 2/);
  });

  it('survives reconcilers that throw synchronously, reject, or throw non-errors', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const calls = new Map<string, number>();
      const t = startController({
        maxConcurrentReconciles: 3,
        reconcile(req: Request) {
          const n = (calls.get(req.name) ?? 0) + 1;
          calls.set(req.name, n);
          if (n > 2) return;
          if (req.name === 'sync') throw new Error('sync throw');
          if (req.name === 'string') throw 'a string';
          return Promise.reject(new Error('rejected'));
        },
      });
      for (const name of ['sync', 'reject', 'string']) t.controller.enqueue({ name });
      await eventually(
        () => [...calls.values()].every((n) => n === 3) && calls.size === 3,
        'three calls for each of the three keys',
        2_000,
        2,
      );
      await t.stop();
      assert.equal(t.logs.filter((e) => e.level === 'error').length, 6);
      assert.ok(t.logs.some((e) => e.err === 'a string'));
      await sleep(5);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('does not requeue terminal errors', async () => {
    let calls = 0;
    const t = startController({
      reconcile: () => {
        calls++;
        throw new TerminalError('bad spec');
      },
    });
    t.controller.enqueue({ name: 'a' });
    await eventually(() => calls === 1, 'calls === 1', 2_000, 2);
    await sleep(30);
    await t.stop();
    assert.equal(calls, 1);
    assert.match(t.metrics.render(), /controller_runtime_reconcile_errors_total\{controller="test"\} 1/);
  });

  it('logs a reconcile that fails because stop aborted it at debug, not as a Reconciler error', async () => {
    let started = false;
    const t = startController({
      async reconcile(_req, signal) {
        started = true;
        await new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('This operation was aborted'))),
        );
      },
    });
    t.controller.enqueue({ name: 'in-flight' });
    await eventually(() => started, 'started', 2_000, 2);
    await t.stop();
    assert.deepEqual(
      t.logs.filter((e) => e.name === 'in-flight').map((e) => [e.level, e.msg]),
      [['debug', 'Reconcile cut short by stop']],
    );
  });

  it('stop waits for in-flight reconciles, aborts their signal and drops the backlog', async () => {
    let finished = 0;
    let sawAbort = false;
    const started: string[] = [];
    const t = startController({
      maxConcurrentReconciles: 2,
      async reconcile(req, signal) {
        started.push(req.name);
        await sleep(80);
        sawAbort ||= signal.aborted;
        finished++;
      },
    });
    for (const name of ['a', 'b', 'c', 'd']) t.controller.enqueue({ name });
    t.controller.enqueueAfter({ name: 'later' }, 20);
    await eventually(() => started.length === 2, 'started.length === 2', 2_000, 2);
    let stopped = false;
    const stopping = t.stop().then(() => (stopped = true));
    await sleep(20);
    assert.equal(stopped, false, 'still draining');
    await stopping;
    assert.equal(finished, 2, 'in-flight reconciles completed');
    assert.equal(sawAbort, true);
    assert.deepEqual(started, ['a', 'b'], 'no new reconciles after stop');
    // Enqueue after stop is ignored rather than an error: event handlers may still fire.
    t.controller.enqueue({ name: 'e' });
    await assert.rejects(t.controller.start(new AbortController().signal), /started more than once/);
  });
});
