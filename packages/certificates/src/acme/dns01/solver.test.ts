import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DNS01Solver, type DNS01Challenge } from './solver.ts';

/**
 * Cleaning up a Challenge whose `dns01` block could never have been presented. Nothing here reaches a
 * network: the block is refused before any query. The RFC 2136 clean-up that does run is solver.e2e.test.ts's.
 */

function challenge(dns01: Record<string, unknown>): DNS01Challenge {
  return { dnsName: 'www.example.test', key: 'value', dns01, resourceNamespace: 'default' };
}

function solver(): DNS01Solver {
  return new DNS01Solver({
    secrets: () =>
      Promise.reject(new Error('no Secret is read for a block that names no provider certkit has')),
    recursiveNameservers: ['127.0.0.1:1'],
    recursiveOnly: true,
    timeoutMs: 200,
  });
}

describe('DNS01Solver.cleanUp of what present refused', () => {
  const refused: [string, Record<string, unknown>, RegExp][] = [
    [
      'a provider certkit does not implement',
      { cloudflare: { apiTokenSecretRef: { name: 'cf' } } },
      /"cloudflare" is not implemented/,
    ],
    ['no provider', {}, /no DNS01 provider configured/],
    ['two providers', { rfc2136: { nameserver: '127.0.0.1:53' }, route53: {} }, /only one DNS01 provider/],
    [
      'bad nameservers of its own',
      { rfc2136: { nameserver: '127.0.0.1:53' }, nameservers: ['bad'] },
      /dns01\.nameservers/,
    ],
  ];
  for (const [what, dns01, presentError] of refused) {
    it(`succeeds with nothing to do for ${what}, which present refuses`, async () => {
      await assert.rejects(solver().present(challenge(dns01)), {
        name: 'DNS01ConfigError',
        message: presentError,
      });
      await solver().cleanUp(challenge(dns01));
    });
  }
});
