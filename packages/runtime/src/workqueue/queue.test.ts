import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { WorkQueue } from './queue.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('WorkQueue', () => {
  it('deduplicates an item added while it waits', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.len, 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.len, 0);
  });

  it('compares objects by key, keeping the first instance', async () => {
    const q = new WorkQueue<{ ns: string; name: string; v: number }>({ key: (o) => `${o.ns}/${o.name}` });
    q.add({ ns: 'x', name: 'a', v: 1 });
    q.add({ ns: 'x', name: 'a', v: 2 });
    q.add({ ns: 'y', name: 'a', v: 3 });
    assert.equal(q.len, 2);
    assert.deepEqual(await q.get(), { ns: 'x', name: 'a', v: 1 });
  });

  it('re-queues an item added while processing only when done, once', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const item = await q.get();
    assert.equal(item, 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len, 0, 'not queued while processing');
    q.done('a');
    assert.equal(q.len, 1);
    assert.equal(await q.get(), 'a');
    q.done('a');
    assert.equal(q.len, 0);
  });

  it('never hands the same item to two workers at once', async () => {
    const q = new WorkQueue<string>();
    const active = new Set<string>();
    let overlaps = 0;
    const processed: string[] = [];
    const worker = async () => {
      for (;;) {
        const item = await q.get();
        if (item === undefined) return;
        if (active.has(item)) overlaps++;
        active.add(item);
        processed.push(item);
        await new Promise((r) => setTimeout(r, 2));
        // Adds during processing must collapse into one rerun after done.
        if (processed.length < 20) q.add(item);
        active.delete(item);
        q.done(item);
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    for (const k of ['a', 'b', 'a', 'a', 'b']) q.add(k);
    // Wait for the work, not for a fixed time: on a loaded machine 2 ms timers run late.
    while (processed.length < 20) await new Promise((r) => setTimeout(r, 5));
    q.shutDown();
    await Promise.all(workers);
    assert.equal(overlaps, 0);
    assert.ok(processed.length >= 20);
  });

  it('serves waiting getters in order as items arrive', async () => {
    const q = new WorkQueue<string>();
    const first = q.get();
    const second = q.get();
    q.add('a');
    q.add('b');
    assert.equal(await first, 'a');
    assert.equal(await second, 'b');
  });

  it('shutDown resolves waiters with undefined, drops new adds, but drains queued items', async () => {
    const q = new WorkQueue<string>();
    const waiter = q.get();
    q.shutDown();
    assert.equal(await waiter, undefined);

    const q2 = new WorkQueue<string>();
    q2.add('a');
    q2.add('b');
    q2.shutDown();
    q2.add('c');
    assert.equal(q2.shuttingDown, true);
    assert.equal(await q2.get(), 'a');
    assert.equal(await q2.get(), 'b');
    assert.equal(await q2.get(), undefined);
  });

  it('shutDown does not wait for processing items; shutDownWithDrain does', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    await q.get();
    q.shutDown();
    assert.equal(await q.get(), undefined);

    const q2 = new WorkQueue<string>();
    q2.add('a');
    await q2.get();
    let drained = false;
    const drain = q2.shutDownWithDrain().then(() => (drained = true));
    await tick();
    assert.equal(drained, false);
    q2.done('a');
    await drain;
    assert.equal(drained, true);
    // Nothing in flight: resolves at once.
    await new WorkQueue().shutDownWithDrain();
  });

  it('reports depth, adds, queue latency and work duration', async () => {
    const clock = new FakeClock();
    const seen = { depth: [] as number[], adds: 0, latency: [] as number[], work: [] as number[] };
    const q = new WorkQueue<string>({
      clock,
      metrics: {
        depth: (d) => seen.depth.push(d),
        add: () => seen.adds++,
        queueLatency: (s) => seen.latency.push(s),
        workDuration: (s) => seen.work.push(s),
      },
    });
    q.add('a');
    q.add('a');
    q.add('b');
    clock.step(250);
    await q.get();
    clock.step(1500);
    q.done('a');
    assert.equal(seen.adds, 2);
    assert.deepEqual(seen.depth, [1, 2, 1]);
    assert.deepEqual(seen.latency, [0.25]);
    assert.deepEqual(seen.work, [1.5]);
  });
});
