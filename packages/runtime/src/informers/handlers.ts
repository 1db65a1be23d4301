import type { KubeObject } from '@certkit/apimachinery';
import { describeError, type Logger } from '../log.ts';
import { objectKey } from './store.ts';

/**
 * Event handlers and their delivery: each handler has its own queue, drained asynchronously and in order,
 * so a handler added late sees the informer's contents as adds before any later event, and a slow or
 * throwing handler never affects the store or the other handlers (client-go's processorListener).
 */

/**
 * What onDelete receives when the informer learnt of a deletion only by relisting: the final state is
 * unknown, `obj` is the last state it had cached (client-go's DeletedFinalStateUnknown).
 */
export interface DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  key: string;
  obj: T | undefined;
}

/**
 * Whether `onDelete` was given a tombstone (the deletion was learnt of by a relist) rather than the object.
 */
export function isDeletedFinalStateUnknown<T extends KubeObject>(
  value: T | DeletedFinalStateUnknown<T>,
): value is DeletedFinalStateUnknown<T> {
  return (
    typeof (value as DeletedFinalStateUnknown<T>).key === 'string' &&
    'obj' in value &&
    (value as KubeObject).metadata === undefined
  );
}

/** The key of an object or of a tombstone (DeletionHandlingMetaNamespaceKeyFunc). */
export function deletionHandlingKey<T extends KubeObject>(value: T | DeletedFinalStateUnknown<T>): string {
  return isDeletedFinalStateUnknown(value) ? value.key : objectKey(value);
}

/**
 * Handlers receive the cached objects themselves: they must not change them (copy first). In informers
 * that freeze their objects, a change throws.
 */
export interface ResourceEventHandler<T extends KubeObject = KubeObject> {
  /**
   * isInInitialList: the object was part of the informer's first list (or, for a late handler, of the store).
   */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** old === new (same resourceVersion) for periodic resyncs. */
  onUpdate?(oldObj: T, newObj: T): void;
  /** An object was deleted; a DeletedFinalStateUnknown when the deletion was learnt of by a relist. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/**
 * What `addEventHandler` returns: whether this handler has seen the initial list, and a way to wait for it.
 */
export interface HandlerRegistration {
  /** True once the informer synced and this handler received every notification of the initial list. */
  hasSynced(): boolean;
  /** Resolves when hasSynced() becomes true (never, if the handler is removed before that). */
  readonly synced: Promise<void>;
}

type Notification<T extends KubeObject> =
  | { type: 'add'; obj: T; initial: boolean }
  | { type: 'update'; old: T; obj: T }
  | { type: 'delete'; obj: T | DeletedFinalStateUnknown<T> };

/** Notifications delivered per turn of the event loop, so a huge initial list does not starve I/O. */
const BATCH = 1000;

/**
 * Delivers an informer's notifications to one handler, in order, in batches so a large list does not starve
 * I/O.
 */
export class Listener<T extends KubeObject = KubeObject> implements HandlerRegistration {
  readonly handler: ResourceEventHandler<T>;
  /** 0: no periodic resync for this handler. */
  resyncPeriodMs: number;
  nextResyncAt = 0;
  readonly synced: Promise<void>;

  readonly #log: Logger;
  readonly #name: string;
  #queue: Notification<T>[] = [];
  #head = 0;
  #scheduled = false;
  #removed = false;
  #enqueued = 0;
  #delivered = 0;
  /** How many notifications make up this handler's initial list; unknown until the informer synced. */
  #syncTarget: number | undefined;
  #resolveSynced!: () => void;

  constructor(handler: ResourceEventHandler<T>, resyncPeriodMs: number, log: Logger, name: string) {
    this.handler = handler;
    this.resyncPeriodMs = resyncPeriodMs;
    this.#log = log;
    this.#name = name;
    this.synced = new Promise((resolve) => (this.#resolveSynced = resolve));
  }

  hasSynced(): boolean {
    return this.#syncTarget !== undefined && this.#delivered >= this.#syncTarget;
  }

  /** Everything enqueued so far belongs to the initial list. */
  markInitialListEnqueued(): void {
    if (this.#syncTarget !== undefined) return;
    this.#syncTarget = this.#enqueued;
    this.#checkSynced();
  }

  /** Queues an add notification. */
  add(obj: T, initial: boolean): void {
    this.#push({ type: 'add', obj, initial });
  }

  /** Queues an update notification. */
  update(old: T, obj: T): void {
    this.#push({ type: 'update', old, obj });
  }

  /** Queues a delete notification. */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.#push({ type: 'delete', obj });
  }

  /** Stops delivering: notifications still queued are dropped. */
  remove(): void {
    this.#removed = true;
    this.#queue = [];
    this.#head = 0;
  }

  get removed(): boolean {
    return this.#removed;
  }

  #push(notification: Notification<T>): void {
    if (this.#removed) return;
    this.#queue.push(notification);
    this.#enqueued++;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  #drain(): void {
    this.#scheduled = false;
    let n = 0;
    while (this.#head < this.#queue.length && n < BATCH && !this.#removed) {
      const notification = this.#queue[this.#head];
      // Drop the reference at once: a delivered object must not be kept alive by the queue.
      this.#queue[this.#head] = undefined as unknown as Notification<T>;
      this.#head++;
      n++;
      this.#deliver(notification);
      this.#delivered++;
    }
    if (this.#head >= this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > BATCH * 4) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#checkSynced();
    if (this.#head < this.#queue.length && !this.#removed && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  #deliver(notification: Notification<T>): void {
    try {
      switch (notification.type) {
        case 'add':
          this.handler.onAdd?.(notification.obj, notification.initial);
          break;
        case 'update':
          this.handler.onUpdate?.(notification.old, notification.obj);
          break;
        case 'delete':
          this.handler.onDelete?.(notification.obj);
          break;
      }
    } catch (err) {
      // A broken handler must not break the informer or starve the other handlers.
      this.#log({
        level: 'error',
        msg: 'event handler failed',
        informer: this.#name,
        event: notification.type,
        err: describeError(err),
      });
    }
  }

  #checkSynced(): void {
    if (this.hasSynced()) this.#resolveSynced();
  }
}
