import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/apimachinery';
import type { Challenge } from '../../../api/types.ts';
import { CHALLENGE_METRIC_STATES, challengeStatusSeries } from './metrics.ts';

function challenge(name: string, status: Challenge['status']): Challenge {
  return {
    metadata: { name, namespace: 'ns' },
    spec: { dnsName: `${name}.example.com`, type: 'HTTP-01' } as Challenge['spec'],
    status,
  };
}

describe('certmanager_certificate_challenge_status', () => {
  it('has one series per state for each Challenge, 1 for its own, in the exposition upstream writes', () => {
    const registry = new MetricsRegistry();
    const challenges = [
      challenge('a', {
        state: 'pending',
        processing: true,
        reason: 'Waiting for HTTP-01 challenge propagation',
      }),
      challenge('b', {}),
    ];
    registry.gaugeFunc(
      'certmanager_certificate_challenge_status',
      'The status of certificate challenges',
      () => challengeStatusSeries(challenges),
    );
    const lines = registry.render().split('\n');
    assert.ok(lines.includes('# TYPE certmanager_certificate_challenge_status gauge'));
    const series = lines.filter((l) => l.startsWith('certmanager_certificate_challenge_status{'));
    assert.equal(series.length, 2 * CHALLENGE_METRIC_STATES.length);
    assert.ok(
      series.includes(
        'certmanager_certificate_challenge_status{status="pending",domain="a.example.com",' +
          'reason="Waiting for HTTP-01 challenge propagation",processing="true",name="a",namespace="ns",' +
          'type="HTTP-01"} 1',
      ),
    );
    assert.ok(
      series.includes(
        'certmanager_certificate_challenge_status{status="valid",domain="a.example.com",' +
          'reason="Waiting for HTTP-01 challenge propagation",processing="true",name="a",namespace="ns",' +
          'type="HTTP-01"} 0',
      ),
    );
    // No state yet: the "" series is the one at 1, and processing reads as Go prints false.
    assert.ok(
      series.includes(
        'certmanager_certificate_challenge_status{status="",domain="b.example.com",reason="",' +
          'processing="false",name="b",namespace="ns",type="HTTP-01"} 1',
      ),
    );
    assert.equal(series.filter((l) => l.endsWith(' 1')).length, 2);
  });

  it('follows the Challenges as they are when scraped: a gone one has no series', () => {
    const registry = new MetricsRegistry();
    const challenges = [challenge('a', { state: 'valid' })];
    registry.gaugeFunc('certmanager_certificate_challenge_status', 'help', () =>
      challengeStatusSeries(challenges),
    );
    assert.match(registry.render(), /status="valid",domain="a\.example\.com"[^}]*\} 1/);
    challenges.pop();
    assert.doesNotMatch(registry.render(), /certmanager_certificate_challenge_status\{/);
  });
});
