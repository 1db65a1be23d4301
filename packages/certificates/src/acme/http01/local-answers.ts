import { randomBytes } from 'node:crypto';

/**
 * Which self-check requests the controller's own HTTP-01 listener answered. The self-check sends a fresh
 * random id in a header with each GET; the listener, when it serves a presented key authorization to a
 * request carrying an id it is waiting for, marks it; the self-check then asks whether its request ended
 * here. An answer from this process leaves nothing to propagate (the key is in memory before the first
 * GET), so the self-check may run its passes back to back instead of 2 s apart (docs/adr/1011-http01-self-check-answered-here.md).
 *
 * Ids are 128 random bits and only those issued and not yet taken are remembered, so a stranger's header
 * marks nothing and the set stays as small as the self-checks in flight.
 */

export const SELF_CHECK_ID_HEADER = 'x-certkit-self-check';

export class LocalAnswers {
  /** Issued ids, and whether the listener answered each. */
  readonly #pending = new Map<string, boolean>();

  /** A new id for one self-check request. */
  issue(): string {
    const id = randomBytes(16).toString('base64url');
    this.#pending.set(id, false);
    return id;
  }

  /** Called by the listener when it served a key authorization to a request carrying `id`. */
  answered(id: string | string[] | undefined): void {
    if (typeof id === 'string' && this.#pending.has(id)) this.#pending.set(id, true);
  }

  /** Whether the request with `id` was answered here so far; the id is kept (`take` forgets it). */
  isAnswered(id: string): boolean {
    return this.#pending.get(id) ?? false;
  }

  /** Whether the request with `id` was answered here; the id is forgotten. */
  take(id: string): boolean {
    const answered = this.#pending.get(id) ?? false;
    this.#pending.delete(id);
    return answered;
  }

  /** Ids issued and not taken yet (for tests: none may leak). */
  get pending(): number {
    return this.#pending.size;
  }
}
