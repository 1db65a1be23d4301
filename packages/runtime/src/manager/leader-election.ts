import { formatMicroTime, isNotFound, type KubeObject } from '@certkit/apimachinery';
import { leases } from '../client/builtins.ts';
import type { ResourceClient, ResourceRef } from '../client/types.ts';
import { sleep } from '../informers/backoff.ts';
import { describeError, jsonLogger, type Logger } from '../log.ts';

/**
 * Lease-based leader election with client-go's semantics (`tools/leaderelection`, `resourcelock/leaselock.go`).
 *
 * - A candidate takes the Lease when it is absent, held by nobody, expired, or already its own.
 * - "Expired" is judged by the candidate's own clock: the lease is valid while
 *   `observedTime + leaseDurationSeconds > now`, where observedTime is when this process last saw the
 *   record *change*. The holder's renewTime is never compared with our clock, so clock skew between
 *   machines does not matter.
 * - Every write is an update at the resourceVersion last read, so two candidates never both win.
 * - The leader renews every retry period; if no renewal succeeds within the renew deadline it stops
 *   leading, before the lease can expire for the others (leaseDuration > renewDeadline).
 */

/**
 * coordination.k8s.io/v1 Leases (the client's `builtins.leases`, under the name the elector's users know).
 */
export const LEASE_RESOURCE: ResourceRef = leases;

/** The spec of a coordination.k8s.io/v1 Lease, as leader election reads and writes it. */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  /** MicroTime: RFC 3339 with microseconds, `2006-01-02T15:04:05.000000Z`. */
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** client-go's `LeaderElectionRecord`, as stored in a Lease spec. */
interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: string;
  renewTime?: string;
  leaderTransitions: number;
}

/** What a LeaderElector tells its user: leading started, leading stopped, another identity leads. */
export interface LeaderCallbacks {
  /**
   * Called when this candidate becomes leader. `signal` aborts when leadership ends. If it returns a
   * promise, a clean shutdown waits for it (while still renewing) before releasing the lease, so the
   * next leader never overlaps with work still running here.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once when leadership ends, whether lost or given up. */
  onStoppedLeading?(): void;
  /** Called when a different holder is observed (including ourselves). */
  onNewLeader?(identity: string): void;
}

/**
 * Options of a LeaderElector: the Lease client, name and namespace, the identity, and client-go's timings.
 */
export interface LeaderElectionOptions {
  /** A client for coordination.k8s.io/v1 leases (`LEASE_RESOURCE`). */
  client: ResourceClient<Lease>;
  namespace: string;
  name: string;
  /** Unique per candidate; controller-runtime uses `hostname_<uuid>`. */
  identity: string;
  /** Default 15 s. How long others wait after the last observed renewal before taking over. */
  leaseDurationMs?: number;
  /** Default 10 s. How long the leader keeps retrying a renewal before it gives up leading. */
  renewDeadlineMs?: number;
  /** Default 2 s. How often candidates try to acquire and the leader renews. */
  retryPeriodMs?: number;
  /** Give the lease up on clean shutdown, so a successor need not wait for it to expire. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  log?: Logger;
}

/** How long a Lease is valid after its last renewal, by default (client-go's LeaseDuration, 15 s). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** How long the leader keeps retrying a renewal before it gives up leading, by default (10 s). */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** How often candidates try to acquire, and the leader to renew, by default (2 s). */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/** client-go's `JitterFactor`: acquire attempts wait retryPeriod · (1 + rand · 1.2). */
const JITTER_FACTOR = 1.2;

/**
 * client-go's Lease-based leader elector: acquires the Lease, renews it while leading, and calls back when
 * leadership starts, ends or changes hands.
 */
export class LeaderElector {
  readonly identity: string;
  private readonly client: ResourceClient<Lease>;
  private readonly namespace: string;
  private readonly name: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly releaseOnCancel: boolean;
  private readonly callbacks: LeaderCallbacks;
  private readonly log: Logger;

  /** The last Lease read or written: updates go at its resourceVersion. */
  private lease: Lease | undefined;
  private observedRecord: LeaderElectionRecord | undefined;
  private observedRaw = '';
  /** performance.now() when observedRecord last changed. */
  private observedTime = 0;
  private reportedLeader = '';
  private running = false;
  private leading = false;

  constructor(options: LeaderElectionOptions) {
    this.client = options.client;
    this.namespace = options.namespace;
    this.name = options.name;
    this.identity = options.identity;
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    this.releaseOnCancel = options.releaseOnCancel ?? false;
    this.callbacks = options.callbacks;
    this.log = options.log ?? jsonLogger();
    // client-go's NewLeaderElector validation, with its messages.
    if (this.leaseDurationMs <= this.renewDeadlineMs)
      throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= JITTER_FACTOR * this.retryPeriodMs)
      throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (this.leaseDurationMs < 1000) throw new Error('leaseDuration must be at least one second');
    if (this.retryPeriodMs < 1) throw new Error('retryPeriod must be greater than zero');
    if (!this.identity) throw new Error('leader election identity must not be empty');
  }

  /** Whether this candidate is leading: between onStartedLeading and onStoppedLeading. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** The holder as last observed ('' if none). */
  get leader(): string {
    return this.observedRecord?.holderIdentity ?? '';
  }

  /**
   * Campaigns until leading, leads until `signal` aborts or renewal fails, then returns. One elector runs
   * once at a time.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('leader elector is already running');
    this.running = true;
    try {
      if (!(await this.acquire(signal))) return;
      await this.lead(signal);
    } finally {
      this.running = false;
    }
  }

  private async lead(signal: AbortSignal): Promise<void> {
    this.leading = true;
    const leading = new AbortController();
    const work = Promise.resolve()
      .then(() => this.callbacks.onStartedLeading(leading.signal))
      .catch((err) =>
        this.log({
          level: 'error',
          msg: 'leader callback failed',
          lease: this.describe(),
          err: describeError(err),
        }),
      );
    // On shutdown, the leader's work stops first and the lease is renewed until it has: only then is it
    // safe for someone else to lead (controller-runtime cancels leader election after its runnables).
    const stopRenewing = new AbortController();
    const onAbort = () => {
      leading.abort();
      void work.finally(() => stopRenewing.abort());
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const lost = await this.renew(stopRenewing.signal);
    signal.removeEventListener('abort', onAbort);
    leading.abort();
    this.leading = false;
    if (lost) {
      this.log({ level: 'error', msg: 'failed to renew lease, leadership lost', lease: this.describe() });
    } else if (this.releaseOnCancel) {
      await this.release();
    }
    this.safely(() => this.callbacks.onStoppedLeading?.());
  }

  /** Tries at once, then every retry period with jitter, until it holds the lease. False if aborted first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log({ level: 'info', msg: 'attempting to acquire leader lease', lease: this.describe() });
    while (!signal.aborted) {
      const acquired = await this.tryAcquireOrRenew(signal, this.renewDeadlineMs);
      this.maybeReportTransition();
      if (acquired) {
        this.log({ level: 'info', msg: 'successfully acquired lease', lease: this.describe() });
        return true;
      }
      await sleep(this.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  /**
   * Renews every retry period. Each round retries until a renewal succeeds or the renew deadline passes
   * (client-go's PollUntilContextTimeout). Returns true if leadership was lost, false if told to stop.
   */
  private async renew(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      const deadline = performance.now() + this.renewDeadlineMs;
      let renewed = false;
      for (;;) {
        const remaining = deadline - performance.now();
        if (remaining <= 0) break;
        // Not aborted by `signal`: an in-flight renewal is let finish (bounded by the deadline), so the
        // resourceVersion we hold stays the server's and a release right after does not conflict.
        renewed = await this.tryAcquireOrRenew(undefined, remaining);
        if (renewed || signal.aborted) break;
        const wait = Math.min(this.retryPeriodMs, deadline - performance.now());
        if (wait <= 0) break;
        await sleep(wait, signal);
      }
      this.maybeReportTransition();
      if (signal.aborted) return false;
      if (!renewed) return true;
      await sleep(this.retryPeriodMs, signal);
    }
    return false;
  }

  /** client-go's tryAcquireOrRenew; `timeoutMs` bounds each request so a hung server cannot stall renewal. */
  private async tryAcquireOrRenew(signal: AbortSignal | undefined, timeoutMs: number): Promise<boolean> {
    try {
      return await this.acquireOrRenewOnce(signal, timeoutMs);
    } catch (err) {
      // Nothing here may end the campaign or the renew loop: an unexpected failure is a failed attempt.
      this.log({
        level: 'error',
        msg: 'lease attempt failed',
        lease: this.describe(),
        err: describeError(err),
      });
      return false;
    }
  }

  private async acquireOrRenewOnce(signal: AbortSignal | undefined, timeoutMs: number): Promise<boolean> {
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
    const reqSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const now = formatMicroTime(new Date());
    const record: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.floor(this.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaderTransitions: 0,
    };

    // 1. Fast path: the leader updates optimistically, assuming the lease it last saw is current.
    if (this.holdsLease() && this.isLeaseValid() && this.observedRecord) {
      record.acquireTime = this.observedRecord.acquireTime;
      record.leaderTransitions = this.observedRecord.leaderTransitions;
      try {
        await this.update(record, reqSignal);
        return true;
      } catch (err) {
        this.log({
          level: 'warn',
          msg: 'failed to update lease optimistically, falling back to slow path',
          lease: this.describe(),
          err: describeError(err),
        });
      }
    }

    // 2. Read the lease, creating it if absent.
    let current: Lease;
    try {
      current = await this.client.get(this.namespace, this.name, { signal: reqSignal });
    } catch (err) {
      if (!isNotFound(err)) {
        this.log({
          level: 'error',
          msg: 'error retrieving lease',
          lease: this.describe(),
          err: describeError(err),
        });
        return false;
      }
      try {
        const lease: Lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { namespace: this.namespace, name: this.name },
          spec: toLeaseSpec(record),
        };
        this.lease = await this.client.create(this.namespace, lease, { signal: reqSignal });
        this.setObservedRecord(record);
        return true;
      } catch (createErr) {
        this.log({
          level: 'error',
          msg: 'error initially creating lease',
          lease: this.describe(),
          err: describeError(createErr),
        });
        return false;
      }
    }

    // 3. Note when the record last changed, then respect a valid lease held by someone else.
    this.lease = current;
    const old = fromLeaseSpec(current.spec);
    const raw = JSON.stringify(old);
    if (raw !== this.observedRaw) {
      this.setObservedRecord(old);
      this.observedRaw = raw;
    }
    if (old.holderIdentity.length > 0 && this.isLeaseValid() && !this.holdsLease()) return false;

    // 4. Take or keep it: a new holder counts one more transition.
    if (this.holdsLease()) {
      record.acquireTime = old.acquireTime;
      record.leaderTransitions = old.leaderTransitions;
    } else {
      record.leaderTransitions = old.leaderTransitions + 1;
    }
    try {
      await this.update(record, reqSignal);
      return true;
    } catch (err) {
      this.log({
        level: 'warn',
        msg: 'failed to update lease',
        lease: this.describe(),
        err: describeError(err),
      });
      return false;
    }
  }

  /**
   * ReleaseOnCancel: an update that leaves the lease unheld and one second long, so candidates take it on
   * their next attempt. leaseTransitions is kept; the next holder increments it.
   */
  private async release(): Promise<void> {
    if (!this.holdsLease() || !this.observedRecord) return;
    const now = formatMicroTime(new Date());
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaderTransitions: this.observedRecord.leaderTransitions,
    };
    try {
      await this.update(record, AbortSignal.timeout(this.renewDeadlineMs));
      this.log({ level: 'info', msg: 'released lease', lease: this.describe() });
    } catch (err) {
      this.log({
        level: 'error',
        msg: 'failed to release lease',
        lease: this.describe(),
        err: describeError(err),
      });
    }
  }

  /** Writes the record at the resourceVersion last seen (a conflict means someone else wrote meanwhile). */
  private async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    if (!this.lease) throw new Error('lease not initialized, call get or create first');
    const updated = await this.client.update({ ...this.lease, spec: toLeaseSpec(record) }, { signal });
    this.lease = updated;
    this.setObservedRecord(record);
  }

  /** client-go's IsLeader: the last observed record names us. */
  private holdsLease(): boolean {
    return this.observedRecord?.holderIdentity === this.identity;
  }

  private setObservedRecord(record: LeaderElectionRecord): void {
    this.observedRecord = record;
    this.observedTime = performance.now();
  }

  private isLeaseValid(): boolean {
    const record = this.observedRecord;
    if (!record) return false;
    return this.observedTime + record.leaseDurationSeconds * 1000 > performance.now();
  }

  private maybeReportTransition(): void {
    const holder = this.observedRecord?.holderIdentity ?? '';
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    // An empty holder (a released lease) is no one's leadership.
    if (holder) this.safely(() => this.callbacks.onNewLeader?.(holder));
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log({
        level: 'error',
        msg: 'leader election callback failed',
        lease: this.describe(),
        err: describeError(err),
      });
    }
  }

  private describe(): string {
    return `${this.namespace}/${this.name}`;
  }
}

function toLeaseSpec(record: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime,
    renewTime: record.renewTime,
    leaseTransitions: record.leaderTransitions,
  };
}

function fromLeaseSpec(spec: LeaseSpec | undefined): LeaderElectionRecord {
  const record: LeaderElectionRecord = {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
  if (spec?.acquireTime) record.acquireTime = spec.acquireTime;
  if (spec?.renewTime) record.renewTime = spec.renewTime;
  return record;
}
