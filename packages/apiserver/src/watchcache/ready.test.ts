import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReadyState } from './ready.ts';

describe('ReadyState', () => {
  it('moves Pending → Ready → Pending → Ready, counting generations, and stops for good', () => {
    let now = 0;
    const s = new ReadyState(() => now);
    assert.equal(s.state, 'Pending');
    assert.equal(s.generation, 0);
    s.setReady();
    assert.equal(s.state, 'Ready');
    assert.equal(s.generation, 1);
    s.setPending('watch failed');
    assert.equal(s.message(), 'storage is (re)initializing: watch failed');
    s.setReady();
    assert.equal(s.generation, 2);
    s.stop();
    s.setPending();
    s.setReady();
    assert.equal(s.state, 'Stopped');
    assert.equal(s.message(), 'apiserver cacher is stopped');
  });

  it('computes Retry-After as min(30, max(1, floor(e^(0.06 t))))', () => {
    let now = 0;
    const s = new ReadyState(() => now);
    const at = (seconds: number) => {
      now = seconds * 1000;
      return s.retryAfterSeconds();
    };
    assert.equal(at(0), 1);
    assert.equal(at(11), 1);
    assert.equal(at(12), 2);
    assert.equal(at(30), 6);
    assert.equal(at(40), 11);
    assert.equal(at(50), 20);
    assert.equal(at(56), 28);
    assert.equal(at(57), 30);
    assert.equal(at(600), 30);
  });

  it('measures the pending time from the moment a ready cache fell back', () => {
    let now = 0;
    const s = new ReadyState(() => now);
    s.setReady();
    now = 100_000;
    s.setPending();
    now = 130_000;
    assert.equal(s.retryAfterSeconds(), 6);
  });
});
