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
 * Bounded: two generations of half the capacity (a version is only of use while the cache may still hand it
 * out, a few moments), so memory does not grow with the number of Certificates.
 */

/** How many Certificates' last replaced versions are remembered. */
export const SUPERSEDED_CAPACITY = 1024;

interface Write {
  /** The resourceVersion the write was based on. */
  from: string;
  /** Whether the write succeeded and the stored version is no longer `from`. */
  superseded: Promise<boolean>;
}

export class SupersededVersions {
  readonly #generationSize: number;
  #current = new Map<string, Write>();
  #previous = new Map<string, Write>();

  constructor(capacity = SUPERSEDED_CAPACITY) {
    this.#generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  /**
   * Whether a write to `key` based on `version` is certain to be refused: a write from the same version
   * succeeded (waiting for one still in flight). False when nothing is known, or the writes from that
   * version failed. Answered at once when no write from that version is in flight, so that a caller that
   * then tracks its own write does so before any other caller looks.
   */
  isSuperseded(key: string, version: string | undefined): boolean | Promise<boolean> {
    if (version === undefined) return false;
    const write = this.#find(key);
    return write?.from === version ? this.#settled(key, write) : false;
  }

  async #settled(key: string, write: Write): Promise<boolean> {
    for (;;) {
      if (await write.superseded) return true;
      // That write failed, and forgot itself: another one from this version may have started meanwhile.
      const next = this.#find(key);
      if (next === undefined || next === write || next.from !== write.from) return false;
      write = next;
    }
  }

  /**
   * Records a write to `key` from `version`, which `superseded` settles: true when it succeeded with a version
   * other than `version`. A failed write is forgotten once settled.
   */
  track(key: string, version: string | undefined, superseded: Promise<boolean>): void {
    if (version === undefined) return;
    const write: Write = { from: version, superseded };
    this.#set(key, write);
    void superseded.then((yes) => {
      if (!yes && this.#find(key) === write) this.#forget(key);
    });
  }

  #find(key: string): Write | undefined {
    return this.#current.get(key) ?? this.#previous.get(key);
  }

  #set(key: string, write: Write): void {
    this.#previous.delete(key);
    if (!this.#current.has(key) && this.#current.size >= this.#generationSize) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, write);
  }

  #forget(key: string): void {
    this.#current.delete(key);
    this.#previous.delete(key);
  }
}
