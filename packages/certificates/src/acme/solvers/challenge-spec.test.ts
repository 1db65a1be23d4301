import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ACMEChallengeSolver, Order } from '../../api/acme-types.ts';
import { challengeName } from '../names.ts';
import { partialChallenge, requiredChallenges } from './challenge-spec.ts';

const solvers: ACMEChallengeSolver[] = [
  { http01: { ingress: { ingressClassName: 'nginx' } } },
  { selector: { dnsZones: ['example.com'] }, dns01: { rfc2136: { nameserver: '10.0.0.53' } } },
];

function order(
  authorizations: NonNullable<Order['status']>['authorizations'],
  meta: Partial<Order['metadata']> = {},
): Order {
  return {
    metadata: { name: 'web-1-1778478136', namespace: 'apps', ...meta },
    spec: { request: 'Q1NS', issuerRef: { name: 'le', kind: 'ClusterIssuer', group: 'cert-manager.io' } },
    status: { authorizations },
  };
}

const offers = (n: number) => [
  { url: `https://acme/chall/${n}/http`, token: `h${n}`, type: 'http-01' },
  { url: `https://acme/chall/${n}/dns`, token: `d${n}`, type: 'dns-01' },
];

describe('partialChallenge and requiredChallenges', () => {
  it('builds the spec from the picked solver and offered challenge, named as cert-manager names it', () => {
    const o = order([{ url: 'https://acme/authz/1', identifier: 'www.example.com', challenges: offers(1) }]);
    const [challenge] = requiredChallenges(o, solvers);
    assert.deepEqual(challenge.spec, {
      url: 'https://acme/chall/1/dns',
      authorizationURL: 'https://acme/authz/1',
      dnsName: 'www.example.com',
      wildcard: false,
      type: 'DNS-01',
      token: 'd1',
      solver: solvers[1],
      issuerRef: o.spec.issuerRef,
    });
    assert.equal(challenge.name, challengeName('web-1-1778478136', challenge.spec));
  });

  it('needs none for authorizations valid from the start, one per other authorization', () => {
    const o = order([
      {
        url: 'https://acme/authz/1',
        identifier: 'example.com',
        initialState: 'valid',
        challenges: offers(1),
      },
      {
        url: 'https://acme/authz/2',
        identifier: 'other.test',
        initialState: 'pending',
        challenges: offers(2),
      },
      { url: 'https://acme/authz/3', identifier: 'example.com', wildcard: true, challenges: [offers(3)[1]] },
    ]);
    const required = requiredChallenges(o, solvers);
    assert.deepEqual(
      required.map((c) => [c.spec.dnsName, c.spec.wildcard, c.spec.type, c.spec.token]),
      [
        ['other.test', false, 'HTTP-01', 'h2'],
        ['example.com', true, 'DNS-01', 'd3'],
      ],
    );
    // Distinct authorizations get distinct names.
    assert.notEqual(required[0].name, required[1].name);
  });

  it('applies the Order’s override annotations to the copy, never to the issuer’s solver', () => {
    const o = order([{ url: 'https://acme/authz/1', identifier: 'other.test', challenges: offers(1) }], {
      annotations: { 'acme.cert-manager.io/http01-override-ingress-name': 'web' },
    });
    const challenge = partialChallenge(o, o.status!.authorizations![0], solvers);
    assert.deepEqual(challenge.spec.solver, { http01: { ingress: { name: 'web' } } });
    assert.deepEqual(solvers[0], { http01: { ingress: { ingressClassName: 'nginx' } } });
  });

  it('fails with upstream’s message when no solver can answer', () => {
    const o = order([
      { url: 'https://acme/authz/1', identifier: 'other.test', wildcard: true, challenges: [offers(1)[1]] },
    ]);
    assert.throws(() => requiredChallenges(o, [solvers[0]]), {
      message: 'no configured challenge solvers can be used for this challenge',
    });
  });
});
