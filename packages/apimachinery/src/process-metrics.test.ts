import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from './metrics.ts';
import { registerProcessMetrics } from './process-metrics.ts';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';

/** Families prom-client's default collectors give on Linux, which dashboards for Node.js services use. */
const FAMILIES = [
  'process_cpu_user_seconds_total counter',
  'process_cpu_system_seconds_total counter',
  'process_cpu_seconds_total counter',
  'process_start_time_seconds gauge',
  'process_resident_memory_bytes gauge',
  'process_virtual_memory_bytes gauge',
  'process_heap_bytes gauge',
  'process_open_fds gauge',
  'process_max_fds gauge',
  'nodejs_eventloop_lag_seconds gauge',
  'nodejs_active_handles_total gauge',
  'nodejs_heap_size_total_bytes gauge',
  'nodejs_heap_size_used_bytes gauge',
  'nodejs_external_memory_bytes gauge',
  'nodejs_heap_space_size_total_bytes gauge',
  'nodejs_version_info gauge',
  'nodejs_gc_duration_seconds histogram',
];

describe('registerProcessMetrics', () => {
  it("adds process_* and nodejs_* to a registry's scrape, after its own metrics, once", async () => {
    const r = new MetricsRegistry();
    r.counter('own_total', 'Own.').inc();
    registerProcessMetrics(r);
    registerProcessMetrics(r);
    const text = await r.scrape();
    for (const family of FAMILIES) {
      const [name] = family.split(' ');
      assert.match(text, new RegExp(`^# TYPE ${family}$`, 'm'), `${name} is scraped`);
      assert.equal(text.match(new RegExp(`^# TYPE ${name} `, 'gm'))?.length, 1, `${name} appears once`);
    }
    assert.ok(text.startsWith('# HELP own_total Own.\n'));
    const samples = parsePrometheus(text);
    // Real readings of this process, not placeholders.
    assert.ok(samples.get('process_resident_memory_bytes')! > 1024 * 1024);
    assert.ok(samples.get('process_open_fds')! > 0);
    assert.ok(
      Math.abs(samples.get('process_start_time_seconds')! - (Date.now() - performance.now()) / 1000) < 5,
    );
    assert.equal(
      samples.get(
        `nodejs_version_info{version="${process.version}",major="${process.versions.node.split('.')[0]}",minor="${process.versions.node.split('.')[1]}",patch="${process.versions.node.split('.')[2]}"}`,
      ),
      1,
    );
    // render() is the registry's own metrics only.
    assert.doesNotMatch(r.render(), /process_/);
  });

  it('serves one set of process metrics to every registry', async () => {
    const a = new MetricsRegistry();
    const b = new MetricsRegistry();
    registerProcessMetrics(a);
    registerProcessMetrics(b);
    const [ta, tb] = [await a.scrape(), await b.scrape()];
    assert.match(ta, /^process_max_fds \d+$/m);
    assert.equal(/^process_max_fds (\d+)$/m.exec(ta)?.[1], /^process_max_fds (\d+)$/m.exec(tb)?.[1]);
  });
});
