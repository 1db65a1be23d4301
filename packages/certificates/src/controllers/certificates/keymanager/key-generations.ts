import type { KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { generatePrivateKey, type PrivateKeySpec } from '../../../pki/index.ts';

/**
 * Private keys generated off the key manager's workers. A reconcile that needs a new key asks for one and
 * returns; the key is generated on libuv's thread pool, and the Certificate is queued again once it is ready.
 * So a worker never waits for key generation, and the thread pool always has the next keys to work on.
 *
 * While more keys are still being generated (a burst of new Certificates), finished keys are handed back in
 * groups rather than one by one: each group then goes through the rest of issuance (Secret, status,
 * CertificateRequest, signing) together, which costs the controller and the API server much less CPU than
 * the same work trickling in at the pace keys come out. A key that is the last one wanted goes at once, so a
 * single Certificate waits for nothing but its key.
 */

/** How many generations run at once: enough that no thread of libuv's pool (4 by default) waits for work. */
const MAX_RUNNING = 2 * Math.max(4, Number(process.env.UV_THREADPOOL_SIZE) || 4, availableParallelism());

export interface KeyGenerationsOptions {
  /** Queues the Certificate (`namespace/name`) whose key is ready. */
  ready: (certificate: string) => void;
  /** How long a finished key may wait for others to join its group, while more are coming. */
  groupWindowMs?: number;
  /** A group goes as soon as it has this many keys. */
  groupSize?: number;
}

interface Generation {
  /** The key spec it is for, and that spec as a string to compare. */
  spec: PrivateKeySpec;
  specKey: string;
  started: boolean;
  key?: KeyObject;
  error?: unknown;
}

export class KeyGenerations {
  private readonly generations = new Map<string, Generation>();
  /** Certificates waiting for a free slot, oldest first. */
  private readonly queued: string[] = [];
  private running = 0;
  /** Certificates whose key is ready but not yet announced: the group being gathered. */
  private group: string[] = [];
  private groupTimer: NodeJS.Timeout | undefined;
  private readonly ready: (certificate: string) => void;
  private readonly groupWindowMs: number;
  private readonly groupSize: number;

  constructor(options: KeyGenerationsOptions) {
    this.ready = options.ready;
    this.groupWindowMs = options.groupWindowMs ?? 200;
    this.groupSize = options.groupSize ?? 16;
  }

  /**
   * The key generated for `certificate` to `spec`, handed over once; undefined while it is being made (its
   * generation is started on the first call). A failed generation throws here, and the next call retries.
   */
  take(certificate: string, spec: PrivateKeySpec): KeyObject | undefined {
    const wanted = `${spec.algorithm ?? ''}/${spec.size ?? ''}`;
    const generation = this.generations.get(certificate);
    if (generation?.specKey === wanted) {
      if (generation.key) {
        this.generations.delete(certificate);
        return generation.key;
      }
      if (generation.error !== undefined) {
        this.generations.delete(certificate);
        throw generation.error;
      }
      return undefined;
    }
    // None yet, or one for a spec that has since changed (its result will be dropped).
    this.generations.set(certificate, { spec, specKey: wanted, started: false });
    this.queued.push(certificate);
    this.startQueued();
    return undefined;
  }

  /** Drops whatever is generated or queued for `certificate` (it was deleted, or no longer needs a key). */
  forget(certificate: string): void {
    this.generations.delete(certificate);
  }

  /** How many keys are being generated or waiting to be. */
  get pending(): number {
    let count = 0;
    for (const g of this.generations.values()) if (!g.key && g.error === undefined) count++;
    return count;
  }

  private startQueued(): void {
    while (this.running < MAX_RUNNING && this.queued.length > 0) {
      const certificate = this.queued.shift() as string;
      const generation = this.generations.get(certificate);
      if (!generation || generation.started) continue;
      generation.started = true;
      this.running++;
      generatePrivateKey(generation.spec).then(
        (key) => this.finish(certificate, generation, { key }),
        (error: unknown) => this.finish(certificate, generation, { error }),
      );
    }
  }

  private finish(certificate: string, generation: Generation, outcome: Pick<Generation, 'key' | 'error'>) {
    this.running--;
    this.startQueued();
    // Forgotten or superseded meanwhile: nobody wants this key.
    if (this.generations.get(certificate) !== generation) return;
    Object.assign(generation, outcome);
    this.announce(certificate);
  }

  private announce(certificate: string): void {
    this.group.push(certificate);
    const moreComing = this.running > 0 || this.queued.length > 0;
    if (!moreComing || this.group.length >= this.groupSize) {
      this.flush();
    } else {
      this.groupTimer ??= setTimeout(() => this.flush(), this.groupWindowMs);
    }
  }

  private flush(): void {
    clearTimeout(this.groupTimer);
    this.groupTimer = undefined;
    const group = this.group;
    this.group = [];
    for (const certificate of group) this.ready(certificate);
  }
}
