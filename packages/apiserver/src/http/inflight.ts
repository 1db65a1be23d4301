import type { ServerResponse } from 'node:http';
import { type MetricsRegistry, newTooManyRequests, type StatusError } from '@certkit/apimachinery';

/**
 * kube-apiserver's --max-requests-inflight and --max-mutating-requests-inflight (its maxinflight filter): at
 * most that many read-only (get, list) and mutating (every other verb) requests are served at once; one more
 * gets a 429 with `Retry-After: 1` and is not served. A request holds its slot until its response is closed,
 * so a list streamed to a slow client keeps counting while it is written: this is what bounds the memory
 * that lists being written can hold together.
 *
 * Long-running requests (watches) never count, as in kube. Neither do the health probes (/healthz, /livez,
 * /readyz): kube's plain filter would count them, but kube-apiserver runs API Priority and Fairness by
 * default instead, whose `probes` flow schema puts them in the `exempt` priority level, so that a loaded
 * server still answers its liveness checks. A limit of 0 means no limit. Unlike kube, members of
 * system:masters are not let through a full pool: certkit's generated admin token is one, and with kube's
 * exemption no client of a default install would ever be limited.
 */
export interface InflightLimits {
  /** Read-only requests served at once (kube's default 400; 0: unlimited). */
  maxRequestsInflight: number;
  /** Mutating requests served at once (kube's default 200; 0: unlimited). */
  maxMutatingRequestsInflight: number;
}

export const DEFAULT_INFLIGHT_LIMITS: InflightLimits = {
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
};

/** kube-apiserver's retryAfter constant in the filter. */
const RETRY_AFTER_SECONDS = 1;

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);
/** kube-apiserver's long-running check: these verbs, and these subresources (none served here today). */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

const isProbe = (path: string) => /^\/(healthz|livez|readyz)(\/|$)/.test(path);

type RequestKind = 'readOnly' | 'mutating';

export class InflightLimiter {
  private readonly limits: Record<RequestKind, number>;
  private readonly inflight: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  private readonly dropped;

  constructor(limits: InflightLimits, metrics: MetricsRegistry) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 0)
        throw new Error(`${name} must be a non-negative integer, got ${value}`);
    }
    this.limits = { readOnly: limits.maxRequestsInflight, mutating: limits.maxMutatingRequestsInflight };
    // kube-apiserver's names for these two.
    this.dropped = metrics.counter(
      'apiserver_dropped_requests_total',
      "Number of requests dropped with 'Try again later' response. Divided by request kind.",
      ['request_kind'],
    );
    metrics.gaugeFunc(
      'apiserver_current_inflight_requests',
      'Number of requests currently executing in this apiserver, by request kind.',
      () => [
        [{ request_kind: 'readOnly' }, this.inflight.readOnly],
        [{ request_kind: 'mutating' }, this.inflight.mutating],
      ],
    );
  }

  /**
   * Takes a slot for the request, given back when its response closes (written out, or the connection
   * gone). Throws the 429 when its pool is full. `verb` and `subresource` are as kube's RequestInfo names them
   * (for a non-resource request the verb is the lower-cased method).
   */
  admit(
    res: ServerResponse,
    path: string,
    { verb, subresource }: { verb: string; subresource?: string },
  ): void {
    if (LONG_RUNNING_VERBS.has(verb) || (subresource && LONG_RUNNING_SUBRESOURCES.has(subresource))) return;
    if (isProbe(path)) return;
    const kind: RequestKind = READ_ONLY_VERBS.has(verb) ? 'readOnly' : 'mutating';
    const limit = this.limits[kind];
    if (limit === 0) return;
    if (this.inflight[kind] >= limit) {
      this.dropped.inc({ request_kind: kind });
      throw tooManyRequests();
    }
    this.inflight[kind]++;
    res.once('close', () => this.inflight[kind]--);
  }
}

/** kube's filter answers in plain text (http.Error); a Status says the same to clients that decode one. */
function tooManyRequests(): StatusError {
  return newTooManyRequests('Too many requests, please try again later.', RETRY_AFTER_SECONDS);
}
