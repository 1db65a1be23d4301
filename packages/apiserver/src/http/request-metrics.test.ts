import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/apimachinery';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';
import { parseApiPath } from './request-info.ts';
import { durationLabels, REQUEST_DURATION_BUCKETS, RequestMetrics } from './request-metrics.ts';
import { parseRequestTarget } from './request-target.ts';

/** A finished request as the server describes it, `verb` being what its RequestInfo names it. */
function finished(method: string, target: string, verb: string, contentType?: string) {
  const url = parseRequestTarget(target);
  return {
    method,
    verb,
    resource: 'ignored-here',
    url,
    parsed: parseApiPath(url.pathname),
    contentType,
    code: 200,
    seconds: 0.03,
  };
}

const NS = '/api/v1/namespaces/default';
const CERTS = '/apis/cert-manager.io/v1/namespaces/default/certificates';

describe('apiserver_request_duration_seconds labels, as kube-apiserver gives them', () => {
  const cases: [string, ReturnType<typeof finished>, Record<string, string>][] = [
    [
      'get of a named object',
      finished('GET', `${NS}/secrets/a`, 'get'),
      { verb: 'GET', group: '', version: 'v1', resource: 'secrets', subresource: '', scope: 'resource' },
    ],
    [
      'list in a namespace',
      finished('GET', `${CERTS}?limit=5`, 'list'),
      { verb: 'LIST', group: 'cert-manager.io', version: 'v1', resource: 'certificates', scope: 'namespace' },
    ],
    [
      'list across namespaces',
      finished('GET', '/api/v1/secrets', 'list'),
      { verb: 'LIST', scope: 'cluster' },
    ],
    ['watch', finished('GET', `${NS}/secrets?watch=1`, 'watch'), { verb: 'WATCH', scope: 'namespace' }],
    [
      'create: scope is "resource"',
      finished('POST', `${NS}/secrets`, 'create'),
      { verb: 'POST', scope: 'resource' },
    ],
    [
      'status update',
      finished('PUT', `${CERTS}/c/status`, 'update'),
      { verb: 'PUT', resource: 'certificates', subresource: 'status', scope: 'resource' },
    ],
    [
      'merge patch',
      finished('PATCH', `${NS}/secrets/a`, 'patch', 'application/merge-patch+json'),
      { verb: 'PATCH' },
    ],
    [
      'server-side apply',
      finished(
        'PATCH',
        `${NS}/secrets/a?fieldManager=m`,
        'patch',
        'application/apply-patch+yaml; charset=utf-8',
      ),
      { verb: 'APPLY' },
    ],
    [
      'delete collection',
      finished('DELETE', `${NS}/secrets`, 'deletecollection'),
      { verb: 'DELETECOLLECTION', scope: 'namespace' },
    ],
    ['dry run', finished('POST', `${NS}/secrets?dryRun=All&dryRun=All`, 'create'), { dry_run: 'All' }],
    ['an unknown dry run', finished('POST', `${NS}/secrets?dryRun=Some`, 'create'), { dry_run: 'invalid' }],
    [
      'a non-resource request',
      finished('GET', '/healthz', 'get'),
      { verb: 'GET', group: '', version: '', resource: '', subresource: '', scope: '', dry_run: '' },
    ],
  ];
  for (const [name, request, expected] of cases) {
    it(name, () => {
      const labels = durationLabels(request);
      assert.equal(labels.component, 'apiserver');
      for (const [label, value] of Object.entries(expected)) assert.equal(labels[label], value, label);
    });
  }
});

describe('RequestMetrics', () => {
  it('counts with the existing labels and observes the duration in kube-apiserver buckets', () => {
    const metrics = new MetricsRegistry();
    const requests = new RequestMetrics(metrics);
    requests.observe({ ...finished('POST', `${NS}/secrets`, 'create'), resource: 'secrets', code: 201 });
    requests.observe({ ...finished('POST', `${NS}/secrets`, 'create'), resource: 'secrets', seconds: 2.5 });
    const text = metrics.render();
    assert.match(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
    const s = parsePrometheus(text);
    assert.equal(s.get('apiserver_request_total{verb="create",resource="secrets",code="201"}'), 1);
    assert.equal(s.get('apiserver_request_total{verb="create",resource="secrets",code="200"}'), 1);
    const series =
      'verb="POST",dry_run="",group="",version="v1",resource="secrets",subresource="",scope="resource",component="apiserver"';
    assert.equal(s.get(`apiserver_request_duration_seconds_count{${series}}`), 2);
    assert.equal(s.get(`apiserver_request_duration_seconds_bucket{${series},le="0.05"}`), 1);
    assert.equal(s.get(`apiserver_request_duration_seconds_bucket{${series},le="3"}`), 2);
    assert.equal(s.get(`apiserver_request_duration_seconds_sum{${series}}`), 2.53);
    assert.equal(REQUEST_DURATION_BUCKETS.length, 23);
    assert.equal(REQUEST_DURATION_BUCKETS.at(-1), 60);
  });
});
