import { rangeAllPaged } from '../storage/paged-range.ts';
import type { KeyValue, Storage, StorageEvent } from '../storage/types.ts';
import {
  NODE_PORTS_PREFIX,
  type RangeEntry,
  SERVICE_IPS_PREFIX,
} from '../registry/builtins/service-ranges.ts';
import { followPrefix } from './storage-follower.ts';

/**
 * Gives back the cluster IPs and node ports Services let go of, as kube-apiserver's repair controllers for
 * its service IP and node port allocators do. Allocation (registry/builtins/service-ranges.ts) takes a
 * storage key per value; this follows the Services and deletes a value's key when the Service that took it
 * is deleted or stops holding it (type changed, port dropped). A sweep, at start and every few minutes,
 * reclaims keys whose Service is gone: a server stopped between allocation and storing the Service, or
 * between a deletion and its release. Keys younger than a grace period are left to their create in flight.
 */

const SWEEP_INTERVAL_MS = 3 * 60_000;
const GRACE_MS = 60_000;

interface HeldValues {
  uid: string;
  keys: string[];
}

function heldValues(value: string): HeldValues | undefined {
  try {
    const svc = JSON.parse(value) as {
      metadata?: { uid?: string };
      spec?: {
        clusterIPs?: string[];
        clusterIP?: string;
        ports?: { nodePort?: number }[];
        healthCheckNodePort?: number;
      };
    };
    const ips = svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : []);
    const keys = [
      ...ips.filter((ip) => ip && ip !== 'None').map((ip) => `${SERVICE_IPS_PREFIX}${ip}`),
      ...(svc.spec?.ports ?? []).filter((p) => p.nodePort).map((p) => `${NODE_PORTS_PREFIX}${p.nodePort}`),
      ...(svc.spec?.healthCheckNodePort ? [`${NODE_PORTS_PREFIX}${svc.spec.healthCheckNodePort}`] : []),
    ];
    return { uid: svc.metadata?.uid ?? '', keys };
  } catch {
    return undefined;
  }
}

function entryOf(kv: KeyValue): RangeEntry | undefined {
  try {
    return JSON.parse(kv.value) as RangeEntry;
  } catch {
    return undefined;
  }
}

export class ServiceRangesRepair {
  private readonly storage: Storage;
  private readonly servicesPrefix: string;
  /** Service storage key → what it holds. */
  private readonly services = new Map<string, HeldValues>();
  private synced = false;
  private follower?: { stop(): void };
  private timer?: NodeJS.Timeout;
  onError: (err: unknown) => void = () => {};

  constructor(storage: Storage, servicesPrefix: string) {
    this.storage = storage;
    this.servicesPrefix = servicesPrefix;
  }

  start(): void {
    this.follower = followPrefix(this.storage, this.servicesPrefix, {
      sync: (kvs) => {
        this.services.clear();
        for (const kv of kvs) {
          const held = heldValues(kv.value);
          if (held) this.services.set(kv.key, held);
        }
        this.synced = true;
        void this.sweep().catch(this.onError);
      },
      event: (ev) => this.event(ev),
    });
    this.timer = setInterval(() => void this.sweep().catch(this.onError), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.follower?.stop();
    clearInterval(this.timer);
  }

  private event(ev: StorageEvent): void {
    const before = ev.prevValue !== undefined ? heldValues(ev.prevValue) : this.services.get(ev.key);
    if (ev.type === 'DELETE') {
      this.services.delete(ev.key);
      const gone = heldValues(ev.value) ?? before;
      if (gone) this.releaseAll(gone.uid, gone.keys);
      return;
    }
    const now = heldValues(ev.value);
    if (now) this.services.set(ev.key, now);
    if (before && now) {
      const kept = new Set(now.keys);
      this.releaseAll(
        before.uid,
        before.keys.filter((k) => !kept.has(k)),
      );
    }
  }

  private releaseAll(uid: string, keys: string[]): void {
    for (const key of keys) this.release(key, uid).catch(this.onError);
  }

  /** Deletes the value's key if the Service with this uid still holds it there (guarded by its revision). */
  private async release(key: string, uid: string): Promise<void> {
    const kv = await this.storage.get(key);
    if (!kv || entryOf(kv)?.uid !== uid) return;
    await this.storage.delete(key, kv.modRevision).catch(() => {});
  }

  /** Reclaims keys no stored Service holds, once they are older than the grace period. */
  async sweep(): Promise<void> {
    if (!this.synced) return;
    const held = new Set<string>();
    for (const svc of this.services.values()) for (const key of svc.keys) held.add(key);
    const cutoff = Date.now() - GRACE_MS;
    for (const prefix of [SERVICE_IPS_PREFIX, NODE_PORTS_PREFIX]) {
      const stale: KeyValue[] = [];
      await rangeAllPaged(this.storage, prefix, (page) => {
        for (const kv of page) {
          if (held.has(kv.key)) continue;
          const allocatedAt = Date.parse(entryOf(kv)?.allocatedAt ?? '');
          if (!(allocatedAt > cutoff)) stale.push(kv);
        }
      });
      for (const kv of stale) await this.storage.delete(kv.key, kv.modRevision).catch(() => {});
    }
  }
}
