/**
 * client-go's EventCorrelator (tools/record/events_cache.go), with its parameters: what an EventRecorder does
 * with each Event before writing it, so that a controller failing in a loop writes one Event whose `count`
 * grows rather than one Event per failure, and an object's Events cannot flood the API server.
 *
 * 1. Aggregation: Events that differ only in their message (same source, object, type and reason) are
 *    counted per 10 minutes; from the 10th distinct message on, they become one Event whose message says
 *    `(combined from similar events): …`.
 * 2. Observation: an Event seen before (same key) becomes an update of the one written: its count is the last
 *    one plus one, its first timestamp and name the first one's, and the write is a strategic merge patch of
 *    count, lastTimestamp and message.
 * 3. Spam filter: a token bucket per source and object (25 at once, then one per 5 minutes); an Event over it
 *    is dropped, though observation still counted it, so the next one written carries the whole count.
 *
 * Each cache holds at most 4096 keys, the least recently used going first.
 */

import { hash } from 'node:crypto';
import { formatTime } from '@certkit/apimachinery';
import type { ObjectReference } from './types.ts';
import { LruMap } from '../lru.ts';

/** client-go's maxLruCacheEntries. */
export const MAX_CACHE_ENTRIES = 4096;
/** Distinct messages per aggregate key and interval before Events are combined (defaultAggregateMaxEvents). */
export const AGGREGATE_MAX_EVENTS = 10;
/** defaultAggregateIntervalInSeconds. */
export const AGGREGATE_INTERVAL_MS = 600_000;
/** defaultSpamBurst: Events a source may write about one object at once. */
export const SPAM_BURST = 25;
/** defaultSpamQPS: then one more every 5 minutes. */
export const SPAM_QPS = 1 / 300;
/** EventAggregatorByReasonMessageFunc's prefix. */
export const COMBINED_PREFIX = '(combined from similar events): ';

/** A core/v1 Event as the recorder writes it. */
export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  source: { component?: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: string;
  reportingComponent?: string;
  reportingInstance?: string;
}

/** What to write: the Event, and the patch when it updates one written before; skip when spam-filtered. */
export type CorrelateResult =
  { skip: true } | { skip: false; event: CoreEvent; patch?: Record<string, unknown> };

/** The clock: milliseconds since the epoch, and the Kubernetes timestamp of such a time. */
export interface EventClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** The Kubernetes timestamp (RFC 3339, whole seconds) of a time in milliseconds. */
  timestamp(ms: number): string;
}

/** The wall clock, Kubernetes timestamps in whole seconds (metav1.Time). */
export const wallClock: EventClock = { now: () => Date.now(), timestamp: (ms) => formatTime(new Date(ms)) };

interface AggregateRecord {
  messages: Set<string>;
  lastMs: number;
}

interface ObservedEvent {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion?: string;
}

interface SpamRecord {
  tokens: number;
  refilledMs: number;
}

/**
 * The caches' keys: client-go's joined strings, kept as their SHA-1 (28 characters) rather than the ~200
 * characters they run to, which would otherwise be most of what the caches hold (docs/adr/0430).
 */
const join = (parts: (string | undefined)[]) => hash('sha1', parts.map((p) => p ?? '').join(''), 'base64');

/** client-go's getEventKey: everything that makes two Events the same one. */
export function eventKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return join([
    e.source.component,
    e.source.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ]);
}

/** EventAggregatorByReasonFunc: the key Events differing only by message share. */
function aggregateKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return join([
    e.source.component,
    e.source.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.reportingComponent,
    e.reportingInstance,
  ]);
}

/** getSpamKey: one bucket per source and object (and type). */
function spamKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return join([e.source.component, e.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type]);
}

/** client-go's name of a new Event: the object's name and the time in Unix nanoseconds, in hex. */
export function eventName(objectName: string, nowMs: number): string {
  let nanos = BigInt(Math.floor(nowMs)) * 1_000_000n;
  // The clock has milliseconds: kept increasing within the process, so names stay unique.
  if (nanos <= lastNanos) nanos = lastNanos + 1n;
  lastNanos = nanos;
  return `${objectName}.${nanos.toString(16)}`;
}
let lastNanos = 0n;

/** client-go's EventCorrelator: aggregation, observation and the spam filter, each with a bounded cache. */
export class EventCorrelator {
  readonly #clock: EventClock;
  readonly #aggregates = new LruMap<string, AggregateRecord>(MAX_CACHE_ENTRIES);
  readonly #observed = new LruMap<string, ObservedEvent>(MAX_CACHE_ENTRIES);
  readonly #spam = new LruMap<string, SpamRecord>(MAX_CACHE_ENTRIES);

  /**
   * One correlator may serve several recorders (client-go: one per broadcaster): its keys name the source, so
   * they stay apart, and its caches are bounded once for all of them.
   */
  constructor(clock: EventClock = wallClock) {
    this.#clock = clock;
  }

  /** Decides what to write for `event` (a new Event, as the recorder made it); `event` is not changed. */
  correlate(event: CoreEvent): CorrelateResult {
    const { event: aggregated, key } = this.#aggregate(event);
    const { event: observed, patch } = this.#observe(aggregated, key);
    if (this.#spamFiltered(observed)) return { skip: true };
    return patch ? { skip: false, event: observed, patch } : { skip: false, event: observed };
  }

  /** After a write: what the server answered (its name and resourceVersion) is what the next update patches. */
  updateState(written: CoreEvent): void {
    this.#observed.set(eventKey(written), {
      count: written.count,
      firstTimestamp: written.firstTimestamp,
      name: written.metadata.name,
      resourceVersion: written.metadata.resourceVersion,
    });
  }

  #aggregate(event: CoreEvent): { event: CoreEvent; key: string } {
    const now = this.#clock.now();
    const key = aggregateKey(event);
    let record = this.#aggregates.get(key);
    if (!record || now - record.lastMs > AGGREGATE_INTERVAL_MS) record = { messages: new Set(), lastMs: now };
    record.messages.add(hash('sha1', event.message, 'base64'));
    record.lastMs = now;
    this.#aggregates.set(key, record);
    if (record.messages.size < AGGREGATE_MAX_EVENTS) return { event, key: eventKey(event) };
    // Never more messages than the limit: one goes, so that the set does not grow.
    record.messages.delete(record.messages.values().next().value!);
    const timestamp = this.#clock.timestamp(now);
    const combined: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: eventName(event.involvedObject.name ?? '', now),
        namespace: event.metadata.namespace,
      },
      involvedObject: event.involvedObject,
      reason: event.reason,
      message: COMBINED_PREFIX + event.message,
      source: event.source,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
      type: event.type,
    };
    return { event: combined, key };
  }

  #observe(event: CoreEvent, key: string): { event: CoreEvent; patch?: Record<string, unknown> } {
    const last = this.#observed.get(key);
    let observed = event;
    let patch: Record<string, unknown> | undefined;
    if (last) {
      observed = {
        ...event,
        metadata: { ...event.metadata, name: last.name, resourceVersion: last.resourceVersion },
        count: last.count + 1,
        firstTimestamp: last.firstTimestamp,
      };
      // client-go's two-way merge patch of the Event against itself with count, lastTimestamp and message
      // emptied: exactly those three fields.
      patch = { count: observed.count, lastTimestamp: observed.lastTimestamp, message: observed.message };
    }
    this.#observed.set(key, {
      count: observed.count,
      firstTimestamp: observed.firstTimestamp,
      name: observed.metadata.name,
      resourceVersion: observed.metadata.resourceVersion,
    });
    return { event: observed, patch };
  }

  /** A passive token bucket per spam key (flowcontrol's TryAccept): true when the Event is dropped. */
  #spamFiltered(event: CoreEvent): boolean {
    const now = this.#clock.now();
    const key = spamKey(event);
    const record = this.#spam.get(key) ?? { tokens: SPAM_BURST, refilledMs: now };
    record.tokens = Math.min(SPAM_BURST, record.tokens + ((now - record.refilledMs) / 1000) * SPAM_QPS);
    record.refilledMs = now;
    const accepted = record.tokens >= 1;
    if (accepted) record.tokens -= 1;
    this.#spam.set(key, record);
    return !accepted;
  }
}
