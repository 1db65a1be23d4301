import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/apimachinery';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';
import { restClientMetricsHook, WORKQUEUE_DURATION_BUCKETS, workqueueMetrics } from './metrics.ts';

describe('controller-runtime metrics', () => {
  it('uses controller-runtime workqueue buckets and labels', () => {
    assert.deepEqual(
      WORKQUEUE_DURATION_BUCKETS,
      [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000],
    );
    const r = new MetricsRegistry();
    const hooks = workqueueMetrics(r, 'certs');
    // Histogram series appear with the first observation, as before the queue hooks were bound.
    assert.doesNotMatch(r.render(), /^workqueue_(queue|work)_duration_seconds/m);
    hooks.add!();
    hooks.depth!(4);
    hooks.queueLatency!(0.002);
    hooks.workDuration!(0.3);
    hooks.retry!();
    const s = parsePrometheus(r.render());
    assert.equal(s.get('workqueue_depth{name="certs",controller="certs"}'), 4);
    assert.equal(s.get('workqueue_adds_total{name="certs",controller="certs"}'), 1);
    assert.equal(s.get('workqueue_retries_total{name="certs",controller="certs"}'), 1);
    assert.equal(
      s.get('workqueue_queue_duration_seconds_bucket{name="certs",controller="certs",le="0.01"}'),
      1,
    );
    assert.equal(s.get('workqueue_work_duration_seconds_count{name="certs",controller="certs"}'), 1);
  });

  it('counts client requests by code and method', () => {
    const r = new MetricsRegistry();
    const onRequest = restClientMetricsHook(r);
    onRequest({ method: 'get', code: 200 });
    onRequest({ method: 'GET', code: 200 });
    onRequest({ method: 'PUT', code: 409 });
    onRequest({ method: 'GET', code: '<error>' });
    // The client's RequestInfo: a verb and 0 for no response.
    onRequest({ verb: 'update', code: 200 });
    onRequest({ verb: 'list', code: 0 });
    const s = parsePrometheus(r.render());
    assert.equal(s.get('rest_client_requests_total{code="200",method="GET"}'), 2);
    assert.equal(s.get('rest_client_requests_total{code="409",method="PUT"}'), 1);
    assert.equal(s.get('rest_client_requests_total{code="<error>",method="GET"}'), 2);
    assert.equal(s.get('rest_client_requests_total{code="200",method="PUT"}'), 1);
  });
});
