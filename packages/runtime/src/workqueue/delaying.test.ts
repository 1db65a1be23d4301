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
});
