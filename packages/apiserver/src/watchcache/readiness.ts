/**
 * The `storage-readiness` post-start hook (KEP-4568): /readyz fails until the caches of every built-in
 * resource are Ready, or until --storage-initialization-timeout has passed, and then latches: a later
 * re-initialisation of one cache must not take the whole server out of rotation (429s cover that case).
 */

export const STORAGE_READINESS_CHECK = 'poststarthook/storage-readiness';

/** kube-apiserver polls every 100 ms. */
const POLL_MS = 100;

export class StorageReadiness {
  private readonly ready: () => boolean;
  private readonly timeoutMs: number;
  private readonly onTimeout: () => void;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(ready: () => boolean, timeoutMs: number, onTimeout: () => void) {
    if (timeoutMs < 0) throw new Error('--storage-initialization-timeout must not be negative');
    this.ready = ready;
    this.timeoutMs = timeoutMs;
    this.onTimeout = onTimeout;
  }

  get done(): boolean {
    return this.finished;
  }

  start(): void {
    const deadline = Date.now() + this.timeoutMs;
    const poll = () => {
      if (this.ready()) {
        this.finished = true;
        return;
      }
      if (Date.now() >= deadline) {
        this.finished = true;
        this.onTimeout();
        return;
      }
      this.timer = setTimeout(poll, POLL_MS);
      this.timer.unref();
    };
    poll();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
