/**
 * The Certificate versions this process's own status writes replaced, so that a write based on one of them is
 * known to be refused without sending it (docs/adr/1150).
 *
 * Six sub-controllers write one Certificate's status from the same informer cache. When two of them act on the
 * same version (the trigger's Issuing=True and readiness's Ready=False on a new Certificate, typically), the
 * first write to land moves the resourceVersion on and the second is answered 409 Conflict: about one wasted
 * round trip per issued Certificate. The same happens when a sub-controller writes again before the watch has
 * brought the version its own write made. The API server refuses every update whose resourceVersion is not the
 * stored one, and resourceVersions never come back, so once a write from version V has succeeded and answered
 * a version other than V, any later write from V would be refused too: the caller gets the same answer, a
 * conflict, without the request. A write from V that is still in flight is waited for first, so the answer
 * is only ever taken from a write that succeeded.
 *
 * A few writes are kept per Certificate, not only the last: the writes of one issuance follow each other
 * (issuing's, then readiness's from the version issuing's made), and a reconcile still holding the version
 * before both must be known stale too (docs/adr/1015). A failed write forgets only itself.
 *
 * Bounded: two generations of half the capacity (a version is only of use while the cache may still hand it
 * out, a few moments), and at most WRITES_PER_OBJECT writes each, so memory does not grow with the number of
 * Certificates.
 */

/** How many Certificates' last replaced versions are remembered. */
export const SUPERSEDED_CAPACITY = 1024;
/** How many of one Certificate's latest writes are remembered: the few of one issuance's burst. */
export const WRITES_PER_OBJECT = 4;

interface Write {
  /** The resourceVersion the write was based on. */
  from: string;
  /** Whether the write succeeded and the stored version is no longer `from`. */
  superseded: Promise<boolean>;
  /** What `superseded` settled to, once it has. */
  outcome?: boolean;
}

export class SupersededVersions {
  readonly #generationSize: number;
  /** Per object, its latest writes, oldest first. */
  #current = new Map<string, Write[]>();
  #previous = new Map<string, Write[]>();

  constructor(capacity = SUPERSEDED_CAPACITY) {
    this.#generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  /**
   * Whether a write to `key` based on `version` is certain to be refused: a write from the same version
   * succeeded (waiting for one still in flight). False when nothing is known, or the writes from that
   * version failed. Answered at once unless a write from that version is in flight, so that a caller that
   * then tracks its own write does so before any other caller looks.
   */
  isSuperseded(key: string, version: string | undefined): boolean | Promise<boolean> {
    if (version === undefined) return false;
    const write = this.#latestFrom(key, version);
    if (write === undefined) return false;
    return write.outcome === true || this.#settled(key, write);
  }

  /**
   * Whether a write to `key` from `version` is already known to have succeeded, so that a copy at `version`
   * is one this process has replaced: synchronous, writes in flight count for nothing.
   */
  isKnownSuperseded(key: string, version: string | undefined): boolean {
    if (version === undefined) return false;
    return this.#find(key)?.some((w) => w.from === version && w.outcome === true) ?? false;
  }

  async #settled(key: string, write: Write): Promise<boolean> {
    for (;;) {
      if (await write.superseded) return true;
      // That write failed, and forgot itself: another one from this version may have started meanwhile.
      const next = this.#latestFrom(key, write.from);
      if (next === undefined || next === write) return false;
      write = next;
    }
  }

  /**
   * Records a write to `key` from `version`, which `superseded` settles: true when it succeeded with a version
   * other than `version`. A failed write is forgotten once settled; the others' outcomes are kept.
   */
  track(key: string, version: string | undefined, superseded: Promise<boolean>): void {
    if (version === undefined) return;
    const write: Write = { from: version, superseded };
    this.#add(key, write);
    void superseded.then((yes) => {
      write.outcome = yes;
      if (!yes) this.#remove(key, write);
    });
  }

  #find(key: string): Write[] | undefined {
    return this.#current.get(key) ?? this.#previous.get(key);
  }

  #latestFrom(key: string, version: string): Write | undefined {
    return this.#find(key)?.findLast((w) => w.from === version);
  }

  #add(key: string, write: Write): void {
    const writes = this.#find(key) ?? [];
    this.#previous.delete(key);
    if (!this.#current.has(key) && this.#current.size >= this.#generationSize) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    writes.push(write);
    if (writes.length > WRITES_PER_OBJECT) writes.shift();
    this.#current.set(key, writes);
  }

  #remove(key: string, write: Write): void {
    const writes = this.#find(key);
    const at = writes?.indexOf(write) ?? -1;
    if (at < 0) return;
    writes!.splice(at, 1);
    if (!writes!.length) {
      this.#current.delete(key);
      this.#previous.delete(key);
    }
  }
}
