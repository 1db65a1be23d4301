import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * The API server's /metrics as a scraper reads it: kube-apiserver's request duration histogram, moved by a
 * real request, and the process metrics (process_*, nodejs_*) of prom-client's default collectors.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t.close();
});

async function scrape(): Promise<{ text: string; samples: Map<string, number> }> {
  const res = await t.fetch('GET', '/metrics');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return { text: res.text, samples: parsePrometheus(res.text) };
}

const CREATE_SERIES =
  'verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver"';

describe('/metrics of the API server', () => {
  it('observes each request in apiserver_request_duration_seconds, with kube-apiserver labels', async () => {
    const before = (await scrape()).samples;
    const count = (s: Map<string, number>) =>
      s.get(`apiserver_request_duration_seconds_count{${CREATE_SERIES}}`) ?? 0;
    const created = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'timed' }, data: { a: '1' } },
    });
    assert.equal(created.status, 201, created.text);
    const { text, samples } = await scrape();
    assert.match(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
    assert.equal(count(samples), count(before) + 1);
    assert.ok(samples.get(`apiserver_request_duration_seconds_sum{${CREATE_SERIES}}`)! > 0);
    assert.equal(
      samples.get(`apiserver_request_duration_seconds_bucket{${CREATE_SERIES},le="+Inf"}`),
      count(samples),
    );
    // The counter keeps its labels.
    assert.ok(samples.get('apiserver_request_total{verb="create",resource="configmaps",code="201"}')! >= 1);
    // A list in the namespace is a LIST with namespace scope; the scrape before it is a non-resource GET.
    await t.fetch('GET', '/api/v1/namespaces/default/configmaps');
    const after = (await scrape()).samples;
    assert.equal(
      after.get(
        'apiserver_request_duration_seconds_count{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver"}',
      ),
      1,
    );
    assert.ok(
      after.get(
        'apiserver_request_duration_seconds_count{verb="GET",dry_run="",group="",version="",resource="",subresource="",scope="",component="apiserver"}',
      )! >= 2,
    );
  });

  it('serves the process metrics: process_* and nodejs_*', async () => {
    const { text, samples } = await scrape();
    for (const family of [
      'process_cpu_seconds_total counter',
      'process_resident_memory_bytes gauge',
      'process_open_fds gauge',
      'process_start_time_seconds gauge',
      'nodejs_heap_size_used_bytes gauge',
      'nodejs_eventloop_lag_seconds gauge',
      'nodejs_gc_duration_seconds histogram',
      'nodejs_version_info gauge',
    ])
      assert.match(text, new RegExp(`^# TYPE ${family}$`, 'm'));
    assert.ok(samples.get('process_resident_memory_bytes')! > 1024 * 1024);
    // Each family once, though every test server in this process registers them.
    assert.equal(text.match(/^# TYPE process_resident_memory_bytes /gm)?.length, 1);
  });
});
