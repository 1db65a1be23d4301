import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BurstEndWatch } from './burst-end.ts';
import { Controller } from './controller.ts';
import { MetricsRegistry } from './metrics.ts';
import { Manager } from './manager.ts';
import { FakeClock } from '../workqueue/clock.ts';
import { eventually } from '@certkit/testenv/eventually';

/** A watch on a fake clock that counts how often it fired. */
function watch(options: { quietMs?: number; minReconciles?: number } = {}) {
  const clock = new FakeClock();
  let fired = 0;
  const w = new BurstEndWatch({ ...options, clock, onBurstEnd: () => fired++ });
  const reconciles = (n: number) => {
    for (let i = 0; i < n; i++) {
      w.begin();
      clock.step(10);
      w.end();
    }
  };
  return { clock, w, reconciles, fired: () => fired };
}

describe('BurstEndWatch', () => {
  it('fires once, quietMs after the last reconcile of a burst, and not again while idle', () => {
    const { clock, reconciles, fired } = watch({ quietMs: 3000, minReconciles: 5 });
    reconciles(20);
    clock.step(2999);
    assert.equal(fired(), 0, 'not before the quiet period has passed');
    clock.step(1);
    assert.equal(fired(), 1);
    assert.equal(clock.pending, 0, 'no timer left behind');
    clock.step(3_600_000);
    assert.equal(fired(), 1, 'an idle hour fires nothing');
  });

  it('never arms a timer while idle, nor for fewer reconciles than a burst', () => {
    const { clock, reconciles, fired } = watch({ quietMs: 3000, minReconciles: 5 });
    clock.step(60_000);
    assert.equal(clock.pending, 0);
    reconciles(4);
    assert.equal(clock.pending, 0, 'four reconciles are not a burst');
    clock.step(60_000);
    assert.equal(fired(), 0);
    // They count towards the next burst, which a fifth completes.
    reconciles(1);
    clock.step(3000);
    assert.equal(fired(), 1);
  });

  it('waits while reconciles keep coming, with one timer, and fires once per burst', () => {
    const { clock, w, reconciles, fired } = watch({ quietMs: 3000, minReconciles: 5 });
    reconciles(5);
    // Reconciles every second: never quiet for 3 s, so it does not fire.
    for (let i = 0; i < 10; i++) {
      clock.step(1000);
      reconciles(1);
      assert.ok(clock.pending <= 1, 'at most one timer');
    }
    assert.equal(fired(), 0);
    // A reconcile still running when the timer comes due holds it off until it ends.
    w.begin();
    clock.step(10_000);
    assert.equal(fired(), 0);
    w.end();
    clock.step(3000);
    assert.equal(fired(), 1);
    // A second burst fires again.
    reconciles(5);
    clock.step(3000);
    assert.equal(fired(), 2);
  });

  it('fires nothing after stop', () => {
    const { clock, w, reconciles, fired } = watch({ quietMs: 3000, minReconciles: 1 });
    reconciles(3);
    w.stop();
    clock.step(10_000);
    assert.equal(fired(), 0);
    assert.equal(clock.pending, 0);
  });
});

describe('Manager afterBurst', () => {
  it("fires once after its controllers' reconciles have stopped, not while they idle", async () => {
    let fired = 0;
    const manager = new Manager({
      metricsBindAddress: '0',
      metrics: new MetricsRegistry(),
      log: () => {},
      afterBurst: { quietMs: 200, minReconciles: 20, onBurstEnd: () => fired++ },
    });
    const controllers = ['a', 'b'].map(
      (name) =>
        new Controller({
          name,
          reconcile: () => {},
          metrics: new MetricsRegistry(),
          log: () => {},
          needLeaderElection: false,
        }),
    );
    for (const c of controllers) manager.add(c);
    const done = manager.start();
    try {
      // Idle, started controllers: nothing fires.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(fired, 0);
      // A burst across both controllers (10 objects each: 20 reconciles).
      for (let i = 0; i < 10; i++)
        for (const c of controllers) c.enqueue({ namespace: 'ns', name: `o-${i}` });
      await eventually(() => fired === 1, 'the end of the burst to fire', 5000);
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(fired, 1, 'once per burst');
    } finally {
      await manager.stop();
      await done;
    }
  });
});
