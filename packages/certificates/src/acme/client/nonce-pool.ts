/**
 * Replay nonces (RFC 8555 §6.5). Every ACME response carries a fresh `Replay-Nonce`; keeping them saves the
 * HEAD newNonce round trip on the next request. Kept last-in first-out (the newest is the least likely to
 * have expired) and bounded, since servers forget old nonces and a stale one only costs a badNonce retry.
 */
export class NoncePool {
  readonly #nonces: string[] = [];
  readonly #max: number;

  constructor(max = 16) {
    this.#max = max;
  }

  /** Keeps a nonce from a response; ignores absent ones. */
  add(nonce: string | undefined): void {
    if (!nonce) return;
    this.#nonces.push(nonce);
    if (this.#nonces.length > this.#max) this.#nonces.shift();
  }

  /** A nonce to use, or undefined when the pool is empty and one must be fetched. Each is handed out once. */
  take(): string | undefined {
    return this.#nonces.pop();
  }

  /** After the server said badNonce: the rest may be as stale. */
  clear(): void {
    this.#nonces.length = 0;
  }

  get size(): number {
    return this.#nonces.length;
  }
}
