import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { IDLE_RELEASE_MS, RECENT_LIVE_READS, RecentLiveReads } from './recent-live-reads.ts';

const secret = (name: string, resourceVersion: string): Secret => ({
  metadata: { name, namespace: 'ns', resourceVersion },
  data: { 'tls.key': 'a2V5' },
});

describe('RecentLiveReads', () => {
  it('answers for the resourceVersion it read, and for no other', () => {
    const reads = new RecentLiveReads();
    const read = reads.set('ns/ca', secret('ca', '5'));
    assert.equal(reads.get('ns/ca', '5'), read);
    assert.equal(reads.get('ns/ca', '6'), undefined, 'the cache shows a newer version: read again');
    assert.equal(reads.get('ns/ca', undefined), undefined);
    assert.equal(reads.get('ns/other', '5'), undefined);
    assert.ok(Object.isFrozen(read) && Object.isFrozen(read.data) && Object.isFrozen(read.metadata));
    reads.releaseIfIdle(Date.now() + IDLE_RELEASE_MS);
  });

  it('keeps the last RECENT_LIVE_READS, and forgets all once unused for IDLE_RELEASE_MS', () => {
    const reads = new RecentLiveReads();
    for (let i = 0; i <= RECENT_LIVE_READS; i++) reads.set(`ns/s${i}`, secret(`s${i}`, '1'));
    assert.equal(reads.size, RECENT_LIVE_READS);
    assert.equal(reads.get('ns/s0', '1'), undefined, 'the oldest went first');
    reads.releaseIfIdle(Date.now() + IDLE_RELEASE_MS - 1_000);
    assert.equal(reads.size, RECENT_LIVE_READS, 'still in use');
    reads.releaseIfIdle(Date.now() + IDLE_RELEASE_MS);
    assert.equal(reads.size, 0);
  });
});
