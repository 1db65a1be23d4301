import type { MetricsRegistry } from '@certkit/runtime';

/**
 * cert-manager's ACME client metrics (`pkg/acme/client/middleware` upstream): every HTTP round trip to an
 * ACME server, retries included, counted and timed by scheme, host, action, method and status (`999` when
 * no answer came). The only place that knows the metrics facility, so moving to another one changes this
 * file alone. Upstream times with a summary (quantiles .5/.9/.99); the registry here has histograms, so the
 * duration is a histogram with the client-go request-latency buckets.
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
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export function registerAcmeClientMetrics(registry: MetricsRegistry): AcmeClientMetrics {
  const count = registry.counter(
    'certmanager_http_acme_client_request_count',
    'The number of requests made by the ACME client.',
    LABEL_NAMES,
  );
  const duration = registry.histogram(
    'certmanager_http_acme_client_request_duration_seconds',
    'The HTTP request latencies in seconds for the ACME client.',
    LABEL_NAMES,
    DURATION_BUCKETS,
  );
  return {
    observe(labels, seconds) {
      // Labels is an interface with string members; the registry takes a plain record of the same.
      const record = { ...labels };
      count.inc(record);
      duration.observe(record, seconds);
    },
  };
}
