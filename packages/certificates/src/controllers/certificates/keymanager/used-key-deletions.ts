/**
 * Deletions of used next-key Secrets, sent off the key manager's workers. Once an issuance is over, the key
 * it used is deleted; nothing waits for that (the issuing controller already wrote the key into the
 * Certificate's Secret, and a later issuance makes a new next key). Awaiting the DELETE held a worker for a
 * round trip per issuance, about a third of the key manager's worker time at scale (docs/adr/1182).
 *
 * The deletion still happens, with the same request; only its failure is reported later: kept for the
 * Certificate, which is queued again, and thrown by its next reconcile (`throwFailure`), so the failure is
 * logged and retried with the controller's backoff, as an awaited deletion's was.
 */
export class UsedKeyDeletions {
  private readonly failures = new Map<string, unknown>();
  private readonly requeue: (certificate: string) => void;

  /** `requeue` queues the Certificate (`namespace/name`) whose deletion failed. */
  constructor(requeue: (certificate: string) => void) {
    this.requeue = requeue;
  }

  /** Starts `deletion` for `certificate` without waiting for it. A failure once `signal` aborted is dropped. */
  start(certificate: string, deletion: Promise<void>, signal: AbortSignal): void {
    deletion.catch((err: unknown) => {
      if (signal.aborted) return;
      this.failures.set(certificate, err);
      this.requeue(certificate);
    });
  }

  /** Throws the failure of an earlier deletion for `certificate`, once. */
  throwFailure(certificate: string): void {
    if (!this.failures.has(certificate)) return;
    const err = this.failures.get(certificate);
    this.failures.delete(certificate);
    throw err;
  }

  /** The Certificate is gone: its failure no longer matters. */
  forget(certificate: string): void {
    this.failures.delete(certificate);
  }
}
