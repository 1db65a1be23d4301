import type { Histogram, MetricsRegistry } from '@certkit/apimachinery';
import type { ParsedPath } from './request-info.ts';
import type { RequestTarget } from './request-target.ts';

/**
 * The API server's per-request metrics: `apiserver_request_total` (certkit's labels since the first version:
 * verb, resource, code) and kube-apiserver's `apiserver_request_duration_seconds`, with its labels and
 * buckets (k8s.io/apiserver/pkg/endpoints/metrics), so that the latency panels and SLO queries written for
 * kube-apiserver work on certkit's server.
 */

/** kube-apiserver's buckets for request_duration_seconds, chosen there for its API call latency SLOs. */
export const REQUEST_DURATION_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

const DURATION_LABELS = [
  'verb',
  'dry_run',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
];

/** What the server knows of a finished request. */
export interface FinishedRequest {
  method: string;
  /** The verb as kube's RequestInfo names it (get, list, watch, create, …; the lower-cased method otherwise). */
  verb: string;
  /** `resource[.group][/subresource]`, '' for a non-resource request. */
  resource: string;
  url: RequestTarget | undefined;
  parsed: ParsedPath | undefined;
  contentType: string | undefined;
  code: number;
  seconds: number;
}

export class RequestMetrics {
  private readonly requests;
  private readonly duration: Histogram;

  constructor(metrics: MetricsRegistry) {
    this.requests = metrics.counter(
      'apiserver_request_total',
      'Counter of apiserver requests broken out for each verb, resource and HTTP response code.',
      ['verb', 'resource', 'code'],
    );
    this.duration = metrics.histogram(
      'apiserver_request_duration_seconds',
      'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      DURATION_LABELS,
      REQUEST_DURATION_BUCKETS,
    );
  }

  observe(r: FinishedRequest): void {
    this.requests.inc({ verb: r.verb, resource: r.resource, code: String(r.code) });
    this.duration.observe(durationLabels(r), r.seconds);
  }
}

/** The labels kube-apiserver's MonitorRequest gives a request. */
export function durationLabels(r: FinishedRequest): Record<string, string> {
  const request = r.parsed?.kind === 'resource' ? r.parsed.request : undefined;
  const labels = {
    verb: r.method.toUpperCase(),
    dry_run: r.url ? dryRun(r.url.searchParams) : '',
    group: request?.group ?? '',
    version: request?.version ?? '',
    resource: request?.resource ?? '',
    subresource: request?.subresource ?? '',
    scope: '',
    component: 'apiserver',
  };
  if (!request) return labels;
  // CleanScope: a named object (or a create) is "resource", else its namespace's or the cluster's.
  labels.scope =
    request.name || r.verb === 'create' ? 'resource' : request.namespace ? 'namespace' : 'cluster';
  labels.verb = kubeVerb(r);
  return labels;
}

/** The verb kube-apiserver reports for a resource request: LIST and WATCH apart from GET, APPLY from PATCH. */
function kubeVerb(r: FinishedRequest): string {
  switch (r.verb) {
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'deletecollection':
      return 'DELETECOLLECTION';
    case 'patch':
      return r.contentType?.split(';')[0].trim().toLowerCase() === 'application/apply-patch+yaml'
        ? 'APPLY'
        : 'PATCH';
    default:
      return r.method.toUpperCase();
  }
}

/** kube's cleanDryRun: the distinct dryRun values, sorted and joined; "invalid" unless each is "All". */
function dryRun(query: URLSearchParams): string {
  const values = [...new Set(query.getAll('dryRun'))].sort();
  if (values.some((v) => v !== 'All')) return 'invalid';
  return values.join(',');
}
