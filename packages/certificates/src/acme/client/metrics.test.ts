import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/runtime';
import { ACME_DURATION_QUANTILES, registerAcmeClientMetrics } from './metrics.ts';

const NAME = 'certmanager_http_acme_client_request_duration_seconds';
const labels = { scheme: 'https', host: 'acme.test', action: 'fetch_cert', method: 'POST', status: '200' };

describe('ACME client metrics', () => {
  it('serves nothing of the duration summary before the first request, as a Go SummaryVec', async () => {
    const registry = new MetricsRegistry();
    registerAcmeClientMetrics(registry);
    assert.doesNotMatch(await registry.scrape(), new RegExp(NAME));
  });

  it('times requests in a summary with upstream’s quantiles, sum and count, beside the counter', async () => {
    const registry = new MetricsRegistry();
    const metrics = registerAcmeClientMetrics(registry);
    for (let i = 1; i <= 100; i++) metrics.observe(labels, i / 100);
    metrics.observe({ ...labels, status: '999' }, 30);
    const text = await registry.scrape();
    assert.match(text, new RegExp(`^# TYPE ${NAME} summary$`, 'm'));
    assert.deepEqual(ACME_DURATION_QUANTILES, [0.5, 0.9, 0.99]);
    const key = 'scheme="https",host="acme.test",action="fetch_cert",method="POST",status="200"';
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      assert.ok(line, `${series} in\n${text}`);
      return Number(line.slice(series.length + 1));
    };
    // 0.01 … 1.00 s: each quantile is about itself (t-digest is exact at this size, give or take a step).
    for (const q of ACME_DURATION_QUANTILES) {
      const v = value(`${NAME}{quantile="${q}",${key}}`);
      assert.ok(Math.abs(v - q) <= 0.02, `quantile ${q} is ${v}`);
    }
    assert.equal(value(`${NAME}_count{${key}}`), 100);
    assert.ok(Math.abs(value(`${NAME}_sum{${key}}`) - 50.5) < 1e-9);
    assert.equal(value(`${NAME}_count{${key.replace('"200"', '"999"')}}`), 1);
    assert.equal(value(`certmanager_http_acme_client_request_count{${key}}`), 100);
    assert.doesNotMatch(text, new RegExp(`^${NAME}_bucket`, 'm'));
  });

  it('shares one summary between registrations on one registry', async () => {
    const registry = new MetricsRegistry();
    registerAcmeClientMetrics(registry).observe(labels, 1);
    registerAcmeClientMetrics(registry).observe(labels, 2);
    const text = await registry.scrape();
    assert.match(text, new RegExp(`^${NAME}_count\\{[^}]*\\} 2$`, 'm'));
    assert.equal(text.split('\n').filter((l) => l === `# TYPE ${NAME} summary`).length, 1);
  });
});
