import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SupersededVersions, WRITES_PER_OBJECT } from './superseded-versions.ts';

/** A promise and its resolve, for writes settled by the test. */
function write() {
  let settle!: (superseded: boolean) => void;
  const superseded = new Promise<boolean>((resolve) => (settle = resolve));
  return { superseded, settle };
}

describe('SupersededVersions', () => {
  it('knows nothing of versions no write was based on, answering at once', () => {
    const versions = new SupersededVersions();
    assert.equal(versions.isSuperseded('ns/a', '1'), false);
    assert.equal(versions.isSuperseded('ns/a', undefined), false);
    versions.track('ns/a', '1', Promise.resolve(true));
    assert.equal(versions.isSuperseded('ns/a', '2'), false, 'another version');
    assert.equal(versions.isSuperseded('ns/b', '1'), false, 'another object');
  });

  it('waits for a write in flight from the same version, and answers with its outcome', async () => {
    const versions = new SupersededVersions();
    const succeeding = write();
    versions.track('ns/a', '1', succeeding.superseded);
    const asked = versions.isSuperseded('ns/a', '1');
    assert.ok(asked instanceof Promise, 'waits for the write in flight');
    succeeding.settle(true);
    assert.equal(await asked, true);
    assert.equal(await versions.isSuperseded('ns/a', '1'), true, 'and remembers it');

    const failing = write();
    versions.track('ns/b', '1', failing.superseded);
    const waiting = versions.isSuperseded('ns/b', '1');
    failing.settle(false);
    assert.equal(await waiting, false, 'a failed write says nothing of the next one');
    assert.equal(versions.isSuperseded('ns/b', '1'), false, 'and is forgotten');
  });

  it('follows a later write from the same version when the one waited for failed', async () => {
    const versions = new SupersededVersions();
    const first = write();
    versions.track('ns/a', '1', first.superseded);
    const waiting = versions.isSuperseded('ns/a', '1');
    const second = write();
    versions.track('ns/a', '1', second.superseded);
    first.settle(false);
    second.settle(true);
    assert.equal(await waiting, true);
  });

  it('keeps what earlier writes replaced when later ones, from the versions they made, succeed or fail', async () => {
    const versions = new SupersededVersions();
    // The issuing controller's write from 1 made 2; readiness wrote from 2; a stale write from 7 failed.
    versions.track('ns/a', '1', Promise.resolve(true));
    versions.track('ns/a', '2', Promise.resolve(true));
    const stale = write();
    versions.track('ns/a', '7', stale.superseded);
    stale.settle(false);
    await stale.superseded;
    assert.equal(versions.isSuperseded('ns/a', '1'), true, 'the first write is still known');
    assert.equal(versions.isSuperseded('ns/a', '2'), true);
    assert.equal(versions.isSuperseded('ns/a', '7'), false, 'the failed one is forgotten');
  });

  it('answers isKnownSuperseded at once, from settled successes only', async () => {
    const versions = new SupersededVersions();
    const inFlight = write();
    versions.track('ns/a', '1', inFlight.superseded);
    assert.equal(versions.isKnownSuperseded('ns/a', '1'), false, 'a write in flight says nothing yet');
    inFlight.settle(true);
    await inFlight.superseded;
    assert.equal(versions.isKnownSuperseded('ns/a', '1'), true);
    assert.equal(versions.isKnownSuperseded('ns/a', '2'), false);
    assert.equal(versions.isKnownSuperseded('ns/a', undefined), false);
    const failing = write();
    versions.track('ns/b', '1', failing.superseded);
    failing.settle(false);
    await failing.superseded;
    assert.equal(versions.isKnownSuperseded('ns/b', '1'), false, 'a failed write replaced nothing');
  });

  it('keeps at most WRITES_PER_OBJECT writes of one object, the latest', async () => {
    const versions = new SupersededVersions();
    for (let v = 1; v <= WRITES_PER_OBJECT + 2; v++) versions.track('ns/a', String(v), Promise.resolve(true));
    await Promise.resolve();
    assert.equal(versions.isKnownSuperseded('ns/a', '1'), false);
    assert.equal(versions.isKnownSuperseded('ns/a', '2'), false);
    for (let v = 3; v <= WRITES_PER_OBJECT + 2; v++)
      assert.equal(versions.isKnownSuperseded('ns/a', String(v)), true);
  });

  it('remembers at most its capacity of objects, the latest ones', async () => {
    const versions = new SupersededVersions(4);
    for (let i = 0; i < 100; i++) versions.track(`ns/c${i}`, '1', Promise.resolve(true));
    assert.equal(versions.isSuperseded('ns/c0', '1'), false, 'the oldest are forgotten');
    assert.equal(await versions.isSuperseded('ns/c99', '1'), true);
    assert.equal(await versions.isSuperseded('ns/c98', '1'), true);
  });
});
