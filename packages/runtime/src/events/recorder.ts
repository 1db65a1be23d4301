/**
 * client-go's record.EventRecorder and its sink (tools/record/event.go): core/v1 Events about objects,
 * correlated before they are written (correlator.ts), written one at a time in the order recorded, and
 * retried while the API server cannot be reached. Recording never throws and never waits: an Event is a
 * courtesy to the user, not part of reconciliation.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { type KubeObject, StatusError } from '@certkit/apimachinery';
import { events as eventsResource } from '../client/builtins.ts';
import type { Client } from '../client/types.ts';
import type { Logger } from '../log.ts';
import { type CoreEvent, EventCorrelator, type EventClock, eventName, wallClock } from './correlator.ts';

/** Who records: core/v1's EventSource. client-go copies the component into reportingComponent. */
export interface EventSource {
  component: string;
  host?: string;
}

/** client-go's maxTriesPerEvent: writes of one Event before it is given up. */
export const MAX_TRIES_PER_EVENT = 12;
/** client-go's sleep between tries (defaultSleepDuration), the first one a random part of it. */
export const RETRY_DELAY_MS = 10_000;
/** client-go's maxQueuedEvents: Events waiting to be written, beyond which new ones are dropped. */
export const MAX_QUEUED_EVENTS = 1000;

/** Where an EventRecorder logs, its clock, its retry delay and its correlator. */
export interface EventRecorderOptions {
  log?: Logger;
  /** The clock (default: the wall clock); tests pass a fake one. */
  clock?: EventClock;
  /** The wait between tries of a write that failed to reach the server (default 10 s). */
  retryDelayMs?: number;
  /** A correlator shared with other recorders (default: one of its own, on `clock`). */
  correlator?: EventCorrelator;
}

/**
 * client-go's record.EventRecorder with its sink: `event()` records one Event about an object, to be
 * correlated and written in the background, in order.
 */
export class EventRecorder {
  readonly #client: Client;
  readonly #source: EventSource;
  readonly #log: Logger;
  readonly #clock: EventClock;
  readonly #retryDelayMs: number;
  readonly #correlator: EventCorrelator;
  #writing: Promise<void> = Promise.resolve();
  #queued = 0;

  constructor(client: Client, source: EventSource, options: EventRecorderOptions = {}) {
    this.#client = client;
    this.#source = source;
    this.#log = options.log ?? (() => {});
    this.#clock = options.clock ?? wallClock;
    this.#retryDelayMs = options.retryDelayMs ?? RETRY_DELAY_MS;
    this.#correlator = options.correlator ?? new EventCorrelator(this.#clock);
  }

  /** Records an Event of `type` (Normal or Warning) about `obj`. */
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.#queued >= MAX_QUEUED_EVENTS) {
      this.#log({
        level: 'warn',
        msg: 'event queue full, dropping event',
        reason,
        object: obj.metadata?.name,
      });
      return;
    }
    const event = this.#newEvent(obj, type, reason, message);
    this.#queued++;
    this.#writing = this.#writing.then(() => this.#record(event)).finally(() => this.#queued--);
  }

  /** Resolves once every Event recorded so far has been written or given up (tests, shutdown). */
  flushed(): Promise<void> {
    return this.#writing;
  }

  /** client-go's generateEvent: a new Event, stamped when recorded. */
  #newEvent(obj: KubeObject, type: string, reason: string, message: string): CoreEvent {
    const meta = obj.metadata ?? {};
    const now = this.#clock.now();
    const timestamp = this.#clock.timestamp(now);
    const source = this.#source.host
      ? { component: this.#source.component, host: this.#source.host }
      : { component: this.#source.component };
    return {
      apiVersion: 'v1',
      kind: 'Event',
      // Events about cluster-scoped objects go to the default namespace, as client-go puts them.
      metadata: { name: eventName(meta.name ?? '', now), namespace: meta.namespace || 'default' },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      source,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
      type,
      reportingComponent: this.#source.component,
      reportingInstance: this.#source.host ?? '',
    };
  }

  /** client-go's recordToSink: correlate, then write, trying again while the server cannot be reached. */
  async #record(event: CoreEvent): Promise<void> {
    const result = this.#correlator.correlate(event);
    if (result.skip) return;
    for (let tries = 1; ; tries++) {
      if (await this.#write(result.event, result.patch)) return;
      if (tries >= MAX_TRIES_PER_EVENT) {
        this.#log({
          level: 'error',
          msg: 'unable to write event, retry limit exceeded',
          reason: event.reason,
        });
        return;
      }
      // The first wait is random, so that clients do not all come back at once after an outage. Unref'd: an
      // Event still waiting to be written never holds a stopping process up (client-go's goroutine does not).
      const delay = tries === 1 ? this.#retryDelayMs * Math.random() : this.#retryDelayMs;
      await sleep(delay, undefined, { ref: false });
    }
  }

  /** client-go's recordEvent: true when done (written, or refused for good), false to try again. */
  async #write(event: CoreEvent, patch: Record<string, unknown> | undefined): Promise<boolean> {
    const events = this.#client.resource<CoreEvent & KubeObject>(eventsResource);
    const { namespace, name } = event.metadata;
    try {
      let written: CoreEvent | undefined;
      if (patch) {
        try {
          written = await events.patch(namespace, name, 'strategic', patch);
        } catch (err) {
          // The Event was deleted (its TTL passed): written anew.
          if (!(err instanceof StatusError && err.code === 404)) throw err;
        }
      }
      if (!written) {
        const { resourceVersion: _, ...metadata } = event.metadata;
        written = await events.create(namespace, { ...event, metadata });
      }
      this.#correlator.updateState(written);
      return true;
    } catch (err) {
      if (err instanceof StatusError) {
        // The server answered: it will answer the same again.
        const expected =
          err.reason === 'AlreadyExists' ||
          (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
        this.#log({
          level: expected ? 'debug' : 'warn',
          msg: 'server rejected event (will not retry)',
          reason: event.reason,
          object: event.involvedObject.name,
          err: err.message,
        });
        return true;
      }
      this.#log({
        level: 'warn',
        msg: 'unable to write event (may retry after sleeping)',
        reason: event.reason,
        object: event.involvedObject.name,
        err: String(err),
      });
      return false;
    }
  }
}
