import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTime } from '@certkit/apimachinery';
import {
  AGGREGATE_INTERVAL_MS,
  COMBINED_PREFIX,
  type CoreEvent,
  type CorrelateResult,
  EventCorrelator,
  SPAM_BURST,
} from './correlator.ts';

/** client-go's EventCorrelator, step by step on a clock the test moves (tools/record/events_cache_test.go's cases). */

function clock(start = Date.UTC(2026, 0, 2, 3, 4, 5)) {
  let now = start;
  return {
    now: () => now,
    timestamp: (ms: number) => formatTime(new Date(ms)),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

let names = 0;
function event(c: ReturnType<typeof clock>, message: string, overrides: Partial<CoreEvent> = {}): CoreEvent {
  const timestamp = c.timestamp(c.now());
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `web.${(names++).toString(16)}`, namespace: 'default' },
    involvedObject: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      name: 'web',
      namespace: 'default',
      uid: 'u-1',
    },
    reason: 'Failed',
    message,
    source: { component: 'cert-manager-certificates-issuing' },
    firstTimestamp: timestamp,
    lastTimestamp: timestamp,
    count: 1,
    type: 'Warning',
    reportingComponent: 'cert-manager-certificates-issuing',
    reportingInstance: '',
    ...overrides,
  };
}

function written(result: CorrelateResult): CoreEvent {
  assert.equal(result.skip, false);
  return (result as { event: CoreEvent }).event;
}

/** What the API server answers: the Event with a resourceVersion, as the recorder hands it back. */
function stored(e: CoreEvent, rv: number): CoreEvent {
  return { ...e, metadata: { ...e.metadata, resourceVersion: String(rv) } };
}

describe('EventCorrelator', () => {
  it('folds a repeated Event into the first: a growing count, the first timestamp kept, a patch of three fields', () => {
    const c = clock();
    const correlator = new EventCorrelator(c);
    const firstResult = correlator.correlate(event(c, 'issuer not ready'));
    const first = written(firstResult);
    assert.equal(first.count, 1);
    assert.equal((firstResult as { patch?: unknown }).patch, undefined);
    correlator.updateState(stored(first, 10));
    for (let n = 2; n <= 5; n++) {
      c.advance(30_000);
      const result = correlator.correlate(event(c, 'issuer not ready'));
      const again = written(result);
      assert.equal(again.metadata.name, first.metadata.name);
      assert.equal(again.metadata.resourceVersion, String(8 + n));
      assert.equal(again.count, n);
      assert.equal(again.firstTimestamp, first.firstTimestamp);
      assert.deepEqual((result as { patch?: unknown }).patch, {
        count: n,
        lastTimestamp: c.timestamp(c.now()),
        message: 'issuer not ready',
      });
      correlator.updateState(stored(again, 9 + n));
    }
  });

  it('keeps Events apart that differ in reason, type or object', () => {
    const c = clock();
    const correlator = new EventCorrelator(c);
    const a = written(correlator.correlate(event(c, 'm')));
    correlator.updateState(stored(a, 1));
    for (const other of [
      event(c, 'm', { reason: 'Issuing' }),
      event(c, 'm', { type: 'Normal' }),
      event(c, 'm', { involvedObject: { ...a.involvedObject, name: 'api', uid: 'u-2' } }),
    ]) {
      const result = correlator.correlate(other);
      assert.equal(written(result).count, 1);
      assert.equal((result as { patch?: unknown }).patch, undefined);
    }
  });

  it('combines the 10th distinct message of one reason within 10 minutes into one Event, counted on', () => {
    const c = clock();
    const correlator = new EventCorrelator(c);
    for (let i = 1; i <= 9; i++) {
      const e = written(correlator.correlate(event(c, `attempt ${i} failed`)));
      assert.equal(e.message, `attempt ${i} failed`);
      correlator.updateState(stored(e, i));
      c.advance(1000);
    }
    const combined = written(correlator.correlate(event(c, 'attempt 10 failed')));
    assert.equal(combined.message, `${COMBINED_PREFIX}attempt 10 failed`);
    assert.equal(combined.count, 1);
    correlator.updateState(stored(combined, 10));
    c.advance(1000);
    const result = correlator.correlate(event(c, 'attempt 11 failed'));
    const next = written(result);
    assert.equal(next.metadata.name, combined.metadata.name);
    assert.equal(next.count, 2);
    assert.deepEqual((result as { patch?: unknown }).patch, {
      count: 2,
      lastTimestamp: c.timestamp(c.now()),
      message: `${COMBINED_PREFIX}attempt 11 failed`,
    });
    // After 10 quiet minutes the messages are counted afresh.
    c.advance(AGGREGATE_INTERVAL_MS + 1000);
    assert.equal(written(correlator.correlate(event(c, 'attempt 12 failed'))).message, 'attempt 12 failed');
  });

  it('drops an object’s Events past a burst of 25, one more every 5 minutes, still counting them', () => {
    const c = clock();
    const correlator = new EventCorrelator(c);
    let last: CoreEvent | undefined;
    for (let i = 0; i < SPAM_BURST; i++) {
      last = written(correlator.correlate(event(c, 'same')));
      correlator.updateState(stored(last, i + 1));
    }
    assert.equal(last!.count, SPAM_BURST);
    assert.deepEqual(correlator.correlate(event(c, 'same')), { skip: true });
    assert.deepEqual(correlator.correlate(event(c, 'other reason', { reason: 'Other' })), { skip: true });
    c.advance(299_000);
    assert.deepEqual(correlator.correlate(event(c, 'same')), { skip: true });
    c.advance(2000);
    const after = written(correlator.correlate(event(c, 'same')));
    // The two dropped repeats were counted: the Event written says 28.
    assert.equal(after.count, SPAM_BURST + 3);
    // Another object has a bucket of its own.
    const other = event(c, 'same', { involvedObject: { ...after.involvedObject, name: 'api', uid: 'u-2' } });
    assert.equal(written(correlator.correlate(other)).count, 1);
  });
});
