import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { DelayingQueue } from './delaying.ts';

/** Items currently waiting in the work queue, taken without waiting. */
async function drain(q: DelayingQueue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.len > 0) {
    const item = (await q.get())!;
    out.push(item);
    q.done(item);
  }
  return out;
}

describe('DelayingQueue', () => {
  it('adds items when their delay passes, in ready order, with a single timer', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('c', 300);
    q.addAfter('a', 100);
    q.addAfter('b', 200);
    q.addAfter('d', 200);
    assert.equal(clock.pending, 1, 'one timer for the whole heap');
    assert.equal(q.len, 0);
    assert.equal(q.delayedLen, 4);
    clock.step(99);
    assert.deepEqual(await drain(q), []);
    clock.step(1);
    assert.deepEqual(await drain(q), ['a']);
    clock.step(100);
    assert.deepEqual(await drain(q), ['b', 'd'], 'same ready time: insertion order');
    clock.step(1000);
    assert.deepEqual(await drain(q), ['c']);
    assert.equal(clock.pending, 0);
  });

  it('cancelAfter drops a waiting item and keeps the others in order', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    for (const [item, ms] of [
      ['a', 100],
      ['b', 200],
      ['c', 300],
      ['d', 400],
      ['e', 500],
    ] as const)
      q.addAfter(item, ms);
    assert.equal(q.cancelAfter('a'), true, 'the head');
    assert.equal(q.cancelAfter('d'), true, 'one in the middle');
    assert.equal(q.cancelAfter('d'), false, 'no longer waiting');
    assert.equal(q.cancelAfter('x'), false, 'never added');
    assert.equal(q.delayedLen, 3);
    clock.step(1000);
    assert.deepEqual(await drain(q), ['b', 'c', 'e']);
    // An item already in the queue is not a waiting one: left alone.
    q.add('f');
    assert.equal(q.cancelAfter('f'), false);
    assert.deepEqual(await drain(q), ['f']);
    // The last waiting item cancelled: its timer goes too.
    q.addAfter('g', 100);
    q.cancelAfter('g');
    clock.step(1000);
    assert.deepEqual(await drain(q), []);
  });

  it('keeps the earliest ready time for duplicates', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 500);
    q.addAfter('a', 100);
    q.addAfter('a', 1000);
    assert.equal(q.delayedLen, 1);
    clock.step(100);
    assert.deepEqual(await drain(q), ['a']);
    clock.step(2000);
    assert.deepEqual(await drain(q), [], 'the later duplicates were not kept');
  });

  it('adds at once for a zero or negative delay', () => {
    const q = new DelayingQueue<string>({ clock: new FakeClock() });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    assert.equal(q.len, 2);
  });

  it('re-checks at least every 10 s', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 60_000);
    clock.step(10_000);
    assert.equal(clock.pending, 1, 're-armed after the 10 s tick');
    clock.step(50_000);
    assert.equal(q.len, 1);
  });

  it('works with real timers', async () => {
    const q = new DelayingQueue<string>();
    const start = performance.now();
    q.addAfter('late', 40);
    q.addAfter('early', 10);
    assert.equal(await q.get(), 'early');
    assert.equal(await q.get(), 'late');
    assert.ok(performance.now() - start >= 39);
    q.shutDown();
  });

  it('shutDown drops waiting items and clears the timer', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    q.shutDown();
    assert.equal(clock.pending, 0);
    q.addAfter('b', 100);
    clock.step(200);
    assert.equal(await q.get(), undefined);
  });

  it('counts addAfter as a retry, as client-go does', () => {
    let retries = 0;
    const q = new DelayingQueue<string>({ clock: new FakeClock(), metrics: { retry: () => retries++ } });
    q.addAfter('a', 10);
    q.addAfter('b', 0);
    assert.equal(retries, 2);
  });

  it('with thousands waiting, each leaves at its own ready time, in order, through adds, re-adds and cancels', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    // A fixed pseudo-random sequence (xorshift), so that a failure repeats.
    let state = 0x2545f491;
    const random = (n: number) => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    // The model: each waiting key's ready time, as addAfter and cancelAfter are documented to keep it.
    const due = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      const key = `ns/cert-${random(4000)}`;
      const ms = 1 + random(100_000);
      if (random(10) === 0) {
        assert.equal(q.cancelAfter(key), due.delete(key), `cancel ${key}`);
        continue;
      }
      q.addAfter(key, ms);
      const at = clock.now() + ms;
      if (!(due.get(key)! <= at)) due.set(key, at);
      if (random(50) === 0) clock.step(random(500));
      // Whatever became due meanwhile has left the heap for the queue.
      for (const item of await drain(q)) {
        assert.ok(due.get(item)! <= clock.now(), `${item} left before its time`);
        due.delete(item);
      }
    }
    assert.equal(q.delayedLen, due.size);
    assert.equal(clock.pending, 1, 'one timer for all of them');
    const expected = [...due].sort((a, b) => a[1] - b[1]);
    let next = 0;
    while (next < expected.length) {
      const at = expected[next][1];
      clock.step(at - clock.now() - 0.5);
      assert.deepEqual(await drain(q), [], `nothing is due before ${at}`);
      clock.step(0.5);
      const left = await drain(q);
      const dueNow = expected.slice(next, next + left.length);
      assert.ok(left.length > 0, `${expected[next][0]} left at its time`);
      assert.deepEqual(new Set(left), new Set(dueNow.map(([key]) => key)));
      assert.ok(dueNow.every(([, t]) => t === at));
      next += left.length;
    }
    assert.equal(q.delayedLen, 0);
  });
});
