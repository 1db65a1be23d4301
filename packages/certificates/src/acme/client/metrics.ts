import type { MetricsRegistry } from '@certkit/runtime';
import type { Registry, Summary } from 'prom-client';

/**
 * cert-manager's ACME client metrics (`pkg/metrics` upstream): every HTTP round trip to an ACME server,
 * retries included, counted and timed by scheme, host, action, method and status (`999` when no answer came).
 * The only place that knows the metrics facilities, so moving to another one changes this file alone.
 *
 * The duration is a summary as upstream's (`prometheus.NewSummaryVec`): quantiles 0.5, 0.9 and 0.99 over the
 * last 10 minutes in 5 age buckets (client_golang's defaults), plus `_sum` and `_count`. The registry has
 * no summaries, so the summary is prom-client's (already a dependency, for the process metrics), in a
 * registry of its own whose exposition is added to every scrape. prom-client estimates quantiles with a
 * t-digest where client_golang uses the objectives' error bounds (0.05, 0.01, 0.001); the series, labels
 * and quantiles a scrape shows are the same. Like undici and jose, prom-client is loaded with the first
 * ACME request, not with the controller (docs/adr/1101-controller-process-setup.md); observations made
 * while it loads are kept and recorded once it is there.
 */

export interface AcmeRequestLabels {
  scheme: string;
  host: string;
  /** cert-manager's name for the operation, e.g. `register_account`, `fetch_cert` (`AcmeAction`). */
  action: string;
  method: string;
  /** The HTTP status code, or `999` when the request got no response. */
  status: string;
}

export interface AcmeClientMetrics {
  observe(labels: AcmeRequestLabels, seconds: number): void;
}

/** The action names cert-manager labels its requests with; anything else is `unnamed_action`. */
export type AcmeAction =
  | 'authorize_order'
  | 'get_order'
  | 'fetch_cert'
  | 'list_cert_alternates'
  | 'wait_order'
  | 'create_order_cert'
  | 'accept_challenge'
  | 'get_challenge'
  | 'get_authorization'
  | 'wait_authorization'
  | 'register_account'
  | 'get_registration'
  | 'discover'
  | 'update_registration'
  | 'get_renewal_info'
  | 'unnamed_action';

const LABEL_NAMES = ['scheme', 'host', 'action', 'method', 'status'];
const DURATION_NAME = 'certmanager_http_acme_client_request_duration_seconds';
const DURATION_HELP = 'The HTTP request latencies in seconds for the ACME client.';
/** Upstream's objectives are 0.5, 0.9 and 0.99; its window is client_golang's DefMaxAge and DefAgeBuckets. */
export const ACME_DURATION_QUANTILES = [0.5, 0.9, 0.99];
const MAX_AGE_SECONDS = 600;
const AGE_BUCKETS = 5;

/** The duration summary, made when the first observation comes (prom-client is imported then). */
class DurationSummary {
  #summary: Summary | undefined;
  #registry: Promise<Registry> | undefined;
  readonly #pending: [AcmeRequestLabels, number][] = [];

  observe(labels: AcmeRequestLabels, seconds: number): void {
    if (this.#summary) {
      this.#summary.observe({ ...labels }, seconds);
      return;
    }
    this.#pending.push([labels, seconds]);
    this.#registry ??= import('prom-client').then(({ Registry, Summary }) => {
      const registry = new Registry();
      this.#summary = new Summary({
        name: DURATION_NAME,
        help: DURATION_HELP,
        labelNames: LABEL_NAMES,
        percentiles: ACME_DURATION_QUANTILES,
        maxAgeSeconds: MAX_AGE_SECONDS,
        ageBuckets: AGE_BUCKETS,
        registers: [registry],
      });
      for (const [l, v] of this.#pending.splice(0)) this.#summary.observe({ ...l }, v);
      return registry;
    });
  }

  /** The summary's exposition; nothing before the first observation, as a Go SummaryVec without children. */
  async render(): Promise<string> {
    return this.#registry ? (await this.#registry).metrics() : '';
  }
}

/** One summary per registry: its collector is added once, so a second registration must share it. */
const summaries = new WeakMap<MetricsRegistry, DurationSummary>();

export function registerAcmeClientMetrics(registry: MetricsRegistry): AcmeClientMetrics {
  const count = registry.counter(
    'certmanager_http_acme_client_request_count',
    'The number of requests made by the ACME client.',
    LABEL_NAMES,
  );
  let duration = summaries.get(registry);
  if (!duration) {
    const summary = (duration = new DurationSummary());
    summaries.set(registry, summary);
    registry.addCollector(DURATION_NAME, () => summary.render());
  }
  return {
    observe(labels, seconds) {
      // Labels is an interface with string members; the registry takes a plain record of the same.
      count.inc({ ...labels });
      duration.observe(labels, seconds);
    },
  };
}
