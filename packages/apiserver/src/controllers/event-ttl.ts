import type { Registry } from '../registry/registry.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { KeyValue, Storage } from '../storage/types.ts';
import { followPrefix } from './storage-follower.ts';

/**
 * Events expire, as kube-apiserver's --event-ttl (default one hour) makes them: an Event goes once its last
 * write is that old, and watchers see it DELETED. kube-apiserver attaches an etcd lease to every Event write;
 * our storages have no leases, so this follows the events prefix and remembers when each Event was last
 * written. Events already stored at start count from their own newest timestamp (lastTimestamp, eventTime,
 * series.lastObservedTime or creationTimestamp), which every writer moves along with the Event.
 */

export const DEFAULT_EVENT_TTL_MS = 60 * 60 * 1000;
/** The longest an expired Event waits for the sweep that deletes it. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

interface Expiry {
  namespace: string;
  name: string;
  /** The Event's resourceVersion when its expiry was set: a later write keeps it. */
  revision: number;
  expiresAt: number;
}

interface EventTimes {
  metadata?: { name?: string; namespace?: string; creationTimestamp?: string };
  lastTimestamp?: string;
  eventTime?: string;
  series?: { lastObservedTime?: string };
}

export class EventTtlController {
  private readonly events: ObjectStore;
  private readonly storage: Storage;
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** By storage key, in order of expiry: a write moves its key to the end, with the latest expiry. */
  private expiries = new Map<string, Expiry>();
  private follower?: { stop(): void };
  private timer?: NodeJS.Timeout;
  private sweeping = false;
  onError: (err: unknown) => void = () => {};

  constructor(registry: Registry, storage: Storage, ttlMs = DEFAULT_EVENT_TTL_MS, now = Date.now) {
    this.events = registry.byResource('', 'events')!;
    this.storage = storage;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  start(): void {
    this.follower = followPrefix(this.storage, this.events.prefix, {
      sync: (kvs) => {
        this.resync(kvs);
        // What expired while the server was down goes now, not at the next sweep.
        void this.sweep();
      },
      event: (ev) => {
        this.expiries.delete(ev.key);
        if (ev.type !== 'PUT') return;
        const { namespace, name } = this.nameOf(ev.key);
        this.expiries.set(ev.key, {
          namespace,
          name,
          revision: ev.revision,
          expiresAt: this.now() + this.ttlMs,
        });
      },
    });
    const interval = Math.max(1000, Math.min(MAX_SWEEP_INTERVAL_MS, this.ttlMs / 10));
    this.timer = setInterval(() => void this.sweep(), interval);
    this.timer.unref();
  }

  stop(): void {
    this.follower?.stop();
    clearInterval(this.timer);
  }

  /** Deletes the Events whose time is up, oldest first. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const now = this.now();
      for (const [key, expiry] of this.expiries) {
        if (expiry.expiresAt > now) break;
        this.expiries.delete(key);
        await this.events
          .delete(expiry.namespace, expiry.name, {
            preconditions: { resourceVersion: String(expiry.revision) },
          })
          .catch((err: { status?: { reason?: string } }) => {
            // Gone already, or written since (its new expiry came with the write's event).
            const reason = err.status?.reason;
            if (reason !== 'NotFound' && reason !== 'Conflict') this.onError(err);
          });
      }
    } finally {
      this.sweeping = false;
    }
  }

  private resync(kvs: KeyValue[]): void {
    const entries: [string, Expiry][] = [];
    for (const kv of kvs) {
      let times: EventTimes;
      try {
        times = JSON.parse(kv.value) as EventTimes;
      } catch {
        continue;
      }
      const { namespace, name } = this.nameOf(kv.key);
      const expiresAt = lastWritten(times) + this.ttlMs;
      entries.push([kv.key, { namespace, name, revision: kv.modRevision, expiresAt }]);
    }
    entries.sort((a, b) => a[1].expiresAt - b[1].expiresAt);
    this.expiries = new Map(entries);
  }

  /** Namespace and name from `<prefix><namespace>/<name>`. */
  private nameOf(key: string): { namespace: string; name: string } {
    const rest = key.slice(this.events.prefix.length);
    const slash = rest.indexOf('/');
    return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  }
}

/** The newest of an Event's own timestamps, in ms (0 when it has none). */
function lastWritten(event: EventTimes): number {
  const stamps = [
    event.lastTimestamp,
    event.eventTime,
    event.series?.lastObservedTime,
    event.metadata?.creationTimestamp,
  ];
  let newest = 0;
  for (const stamp of stamps) {
    const ms = stamp ? Date.parse(stamp) : NaN;
    if (ms > newest) newest = ms;
  }
  return newest;
}
