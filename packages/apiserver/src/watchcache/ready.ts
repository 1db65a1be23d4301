/**
 * The readiness of one resource's watch cache, as kube-apiserver's cacher/ready.go (KEP-4568): Pending until
 * its initial list is in, Ready while it follows storage, back to Pending when that breaks, Stopped for good
 * at shutdown. The generation counts Pending→Ready transitions so a watch can tell it raced a re-initialisation.
 */

export type CacheState = 'Pending' | 'Ready' | 'Stopped';

export const NOT_READY_MESSAGE = 'storage is (re)initializing';

export class ReadyState {
  private current: CacheState = 'Pending';
  private changedAt: number;
  private lastError: string | undefined;
  private gen = 0;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    this.changedAt = now();
  }

  get state(): CacheState {
    return this.current;
  }

  get generation(): number {
    return this.gen;
  }

  get ready(): boolean {
    return this.current === 'Ready';
  }

  setReady(): void {
    if (this.current !== 'Pending') return;
    this.current = 'Ready';
    this.gen++;
    this.lastError = undefined;
    this.changedAt = this.now();
  }

  setPending(error?: string): void {
    if (this.current === 'Stopped') return;
    if (this.current === 'Ready') this.changedAt = this.now();
    this.current = 'Pending';
    this.lastError = error;
  }

  stop(): void {
    this.current = 'Stopped';
    this.changedAt = this.now();
  }

  /** Why a request cannot be served from the cache now. */
  message(): string {
    if (this.current === 'Stopped') return 'apiserver cacher is stopped';
    return this.lastError ? `${NOT_READY_MESSAGE}: ${this.lastError}` : NOT_READY_MESSAGE;
  }

  /**
   * Retry-After for requests refused while Pending: min(30, max(1, floor(e^(0.06 × seconds pending)))), so
   * clients retry quickly after a short blip and back off to 30 s when re-initialisation takes long.
   */
  retryAfterSeconds(): number {
    const seconds = (this.now() - this.changedAt) / 1000;
    return Math.min(30, Math.max(1, Math.floor(Math.exp(0.06 * seconds))));
  }
}
