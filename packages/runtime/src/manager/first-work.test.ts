import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller } from './controller.ts';
import { FirstWorkWatch } from './first-work.ts';
import { MetricsRegistry } from './metrics.ts';
import { Manager } from './manager.ts';
import { eventually } from '@certkit/testenv/eventually';

describe('FirstWorkWatch', () => {
  it('fires once, at the first request queued', () => {
    let fired = 0;
    const w = new FirstWorkWatch(() => fired++);
    assert.equal(w.hasFired, false);
    w.queued();
    assert.equal(fired, 1);
    assert.equal(w.hasFired, true);
    w.queued();
    w.begin();
    w.end();
    assert.equal(fired, 1);
  });

  it('fires at a reconcile whose request was queued before the watch saw it', () => {
    let fired = 0;
    const w = new FirstWorkWatch(() => fired++);
    w.begin();
    w.end();
    assert.equal(fired, 1);
  });
});

describe('Manager onFirstWork', () => {
  function setup() {
    let fired = 0;
    const reconciled: string[] = [];
    const manager = new Manager({
      metricsBindAddress: '0',
      metrics: new MetricsRegistry(),
      log: () => {},
      onFirstWork: () => {
        // Before any reconcile: the compilers are on for the first one.
        assert.deepEqual(reconciled, []);
        fired++;
      },
    });
    const controllers = ['a', 'b'].map(
      (name) =>
        new Controller({
          name,
          reconcile: (request) => void reconciled.push(`${name}:${request.name}`),
          metrics: new MetricsRegistry(),
          log: () => {},
          needLeaderElection: false,
        }),
    );
    for (const c of controllers) manager.add(c);
    return { manager, controllers, reconciled, fired: () => fired };
  }

  it('does not fire while started controllers idle, fires once at the first request of any', async () => {
    const { manager, controllers, reconciled, fired } = setup();
    const done = manager.start();
    try {
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(fired(), 0, 'nothing queued: an idle controller');
      controllers[1].enqueue({ namespace: 'ns', name: 'one' });
      assert.equal(fired(), 1, 'at the add, before any worker takes it');
      controllers[0].enqueue({ namespace: 'ns', name: 'two' });
      controllers[1].enqueue({ namespace: 'ns', name: 'three' });
      await eventually(() => reconciled.length === 3, 'three reconciles');
      assert.equal(fired(), 1, 'once');
    } finally {
      await manager.stop();
      await done;
    }
  });

  it('fires for a request queued by a delay coming due, and for one queued before start', async () => {
    const delayed = setup();
    delayed.controllers[0].enqueueAfter({ name: 'later' }, 100);
    assert.equal(delayed.fired(), 0, 'waiting on a delay is not work yet');
    await eventually(() => delayed.fired() === 1, 'the delayed request to fire the watch');

    // Event handlers may queue while the controllers wait for leadership or for the caches to sync.
    const early = setup();
    early.controllers[0].enqueue({ name: 'early' });
    assert.equal(early.fired(), 1);
    const done = early.manager.start();
    try {
      await eventually(() => early.reconciled.length === 1, 'the early request reconciled');
      assert.equal(early.fired(), 1);
    } finally {
      await early.manager.stop();
      await done;
    }
  });
});
