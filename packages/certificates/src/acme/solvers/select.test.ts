import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ACMEChallenge, ACMEChallengeSolver } from '../../api/acme-types.ts';
import { compareDomainName, countLabels, matchDNSZones, pickSolver } from './select.ts';

const http = { url: 'https://acme/chall/h', token: 'h', type: 'http-01' } satisfies ACMEChallenge;
const dns = { url: 'https://acme/chall/d', token: 'd', type: 'dns-01' } satisfies ACMEChallenge;

/** A solver named by its ingress name (HTTP-01) or webhook solverName (DNS-01), so rows can say which won. */
function solver(
  name: string,
  kind: 'http' | 'dns',
  selector?: ACMEChallengeSolver['selector'],
): ACMEChallengeSolver {
  const base: ACMEChallengeSolver =
    kind === 'http'
      ? { http01: { ingress: { name } } }
      : { dns01: { webhook: { groupName: 'acme.example.com', solverName: name } } };
  return selector ? { selector, ...base } : base;
}

const nameOf = (s: ACMEChallengeSolver | undefined) =>
  s?.http01?.ingress?.name ?? s?.dns01?.webhook?.solverName;

interface Row {
  name: string;
  identifier: string;
  wildcard?: boolean;
  offered: ACMEChallenge[];
  labels?: Record<string, string>;
  solvers: ACMEChallengeSolver[];
  /** Name of the solver that must be picked, and the challenge type it answers; undefined: none. */
  want?: [string, string];
}

const ROWS: Row[] = [
  {
    name: 'the only default solver',
    identifier: 'example.com',
    offered: [http],
    solvers: [solver('default', 'http')],
    want: ['default', 'http-01'],
  },
  {
    name: 'an empty (non-nil) selector acts as a default',
    identifier: 'example.com',
    offered: [http],
    solvers: [solver('empty', 'http', {})],
    want: ['empty', 'http-01'],
  },
  {
    name: 'the default when the selecting solver does not match',
    identifier: 'example.com',
    offered: [http],
    labels: { app: 'web' },
    solvers: [solver('default', 'http'), solver('labels', 'http', { matchLabels: { app: 'api' } })],
    want: ['default', 'http-01'],
  },
  {
    name: 'the DNS-01 solver when only dns-01 is offered',
    identifier: 'example.com',
    offered: [dns],
    solvers: [solver('h', 'http'), solver('d', 'dns')],
    want: ['d', 'dns-01'],
  },
  {
    name: 'the first offered challenge of the solver’s type',
    identifier: 'example.com',
    offered: [dns, http, { ...http, url: 'https://acme/chall/h2' }],
    solvers: [solver('h', 'http')],
    want: ['h', 'http-01'],
  },
  {
    name: 'none when no solver matches',
    identifier: 'example.com',
    offered: [http],
    solvers: [solver('labels', 'http', { matchLabels: { a: 'b' } }), solver('d', 'dns')],
  },
  { name: 'none without solvers', identifier: 'example.com', offered: [http, dns], solvers: [] },
  {
    name: 'a dnsNames solver naming the domain',
    identifier: 'example.com',
    offered: [http],
    solvers: [solver('default', 'http'), solver('named', 'http', { dnsNames: ['example.com'] })],
    want: ['named', 'http-01'],
  },
  {
    name: 'a dnsNames solver naming the domain, listed first',
    identifier: 'example.com',
    offered: [http],
    solvers: [solver('named', 'http', { dnsNames: ['example.com'] }), solver('default', 'http')],
    want: ['named', 'http-01'],
  },
  {
    name: 'the default when dnsNames names another domain',
    identifier: 'www.example.com',
    offered: [http],
    solvers: [solver('default', 'http'), solver('named', 'http', { dnsNames: ['example.com'] })],
    want: ['default', 'http-01'],
  },
  {
    name: 'two solvers naming the domain: the one with more matching labels',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1', b: '2' },
    solvers: [
      solver('one-label', 'http', { dnsNames: ['example.com'], matchLabels: { a: '1' } }),
      solver('two-labels', 'http', { dnsNames: ['example.com'], matchLabels: { a: '1', b: '2' } }),
      solver('also-one', 'http', { dnsNames: ['example.com'], matchLabels: { b: '2' } }),
    ],
    want: ['two-labels', 'http-01'],
  },
  {
    name: 'dnsNames beats matchLabels',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1' },
    solvers: [
      solver('labels', 'http', { matchLabels: { a: '1' } }),
      solver('named', 'http', { dnsNames: ['example.com'] }),
    ],
    want: ['named', 'http-01'],
  },
  {
    name: 'dnsNames beats matchLabels (reversed order)',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1' },
    solvers: [
      solver('named', 'http', { dnsNames: ['example.com'] }),
      solver('labels', 'http', { matchLabels: { a: '1' } }),
    ],
    want: ['named', 'http-01'],
  },
  {
    name: 'dnsNames beats two matching labels',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1', b: '2' },
    solvers: [
      solver('labels', 'http', { matchLabels: { a: '1', b: '2' } }),
      solver('named', 'http', { dnsNames: ['example.com'] }),
    ],
    want: ['named', 'http-01'],
  },
  {
    name: 'the most matching labels among label selectors',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1', b: '2', c: '3' },
    solvers: [
      solver('one', 'http', { matchLabels: { a: '1' } }),
      solver('three', 'http', { matchLabels: { a: '1', b: '2', c: '3' } }),
      solver('two', 'http', { matchLabels: { a: '1', b: '2' } }),
    ],
    want: ['three', 'http-01'],
  },
  {
    name: 'a wildcard matches a `*.` dnsNames entry, by DNS-01',
    identifier: 'example.com',
    wildcard: true,
    offered: [dns],
    solvers: [solver('default', 'dns'), solver('wildcard', 'dns', { dnsNames: ['*.example.com'] })],
    want: ['wildcard', 'dns-01'],
  },
  {
    name: 'a wildcard does not match the apex dnsNames entry',
    identifier: 'example.com',
    wildcard: true,
    offered: [dns],
    solvers: [solver('default', 'dns'), solver('apex', 'dns', { dnsNames: ['example.com'] })],
    want: ['default', 'dns-01'],
  },
  {
    name: 'a wildcard is never given an HTTP-01 solver: the server offers only dns-01',
    identifier: 'example.com',
    wildcard: true,
    offered: [dns],
    solvers: [solver('http-named', 'http', { dnsNames: ['*.example.com'] })],
  },
  {
    name: 'dnsNames beats dnsZones',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [
      solver('zone', 'dns', { dnsZones: ['example.com'] }),
      solver('named', 'dns', { dnsNames: ['www.example.com'] }),
    ],
    want: ['named', 'dns-01'],
  },
  {
    name: 'dnsNames beats dnsZones (reversed order)',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [
      solver('named', 'dns', { dnsNames: ['www.example.com'] }),
      solver('zone', 'dns', { dnsZones: ['example.com'] }),
    ],
    want: ['named', 'dns-01'],
  },
  {
    name: 'a matching dnsZone',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [solver('default', 'dns'), solver('zone', 'dns', { dnsZones: ['example.com'] })],
    want: ['zone', 'dns-01'],
  },
  {
    name: 'the most specific dnsZone',
    identifier: 'a.b.example.com',
    offered: [dns],
    solvers: [
      solver('example.com', 'dns', { dnsZones: ['example.com'] }),
      solver('b.example.com', 'dns', { dnsZones: ['b.example.com'] }),
    ],
    want: ['b.example.com', 'dns-01'],
  },
  {
    name: 'the most specific dnsZone (reversed order)',
    identifier: 'a.b.example.com',
    offered: [dns],
    solvers: [
      solver('b.example.com', 'dns', { dnsZones: ['b.example.com'] }),
      solver('example.com', 'dns', { dnsZones: ['example.com'] }),
    ],
    want: ['b.example.com', 'dns-01'],
  },
  {
    name: 'the longest zone within one solver’s list counts',
    identifier: 'a.b.example.com',
    offered: [dns],
    solvers: [
      solver('two-zones', 'dns', { dnsZones: ['com', 'b.example.com'] }),
      solver('example.com', 'dns', { dnsZones: ['example.com'] }),
    ],
    want: ['two-zones', 'dns-01'],
  },
  {
    name: 'the same dnsZone twice: the one with more matching labels',
    identifier: 'www.example.com',
    offered: [dns],
    labels: { a: '1' },
    solvers: [
      solver('zone', 'dns', { dnsZones: ['example.com'] }),
      solver('zone-and-label', 'dns', { dnsZones: ['example.com'], matchLabels: { a: '1' } }),
    ],
    want: ['zone-and-label', 'dns-01'],
  },
  {
    name: 'both name the domain, one also matches a zone: that one',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [
      solver('named', 'dns', { dnsNames: ['www.example.com'] }),
      solver('named-and-zoned', 'dns', { dnsNames: ['www.example.com'], dnsZones: ['example.com'] }),
    ],
    want: ['named-and-zoned', 'dns-01'],
  },
  {
    name: 'both name the domain, one also matches a zone: that one (reversed order)',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [
      solver('named-and-zoned', 'dns', { dnsNames: ['www.example.com'], dnsZones: ['example.com'] }),
      solver('named', 'dns', { dnsNames: ['www.example.com'] }),
    ],
    want: ['named-and-zoned', 'dns-01'],
  },
  {
    name: 'a zone beats labels when neither names the domain',
    identifier: 'www.example.com',
    offered: [dns],
    labels: { a: '1', b: '2' },
    solvers: [
      solver('labels', 'dns', { matchLabels: { a: '1', b: '2' } }),
      solver('zone', 'dns', { dnsZones: ['example.com'] }),
    ],
    want: ['zone', 'dns-01'],
  },
  {
    name: 'a tie keeps the earlier solver',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [
      solver('first', 'dns', { dnsZones: ['example.com'] }),
      solver('second', 'dns', { dnsZones: ['example.com'] }),
    ],
    want: ['first', 'dns-01'],
  },
  {
    name: 'the first of two defaults',
    identifier: 'example.com',
    offered: [http],
    solvers: [solver('first', 'http'), solver('second', 'http')],
    want: ['first', 'http-01'],
  },
  {
    name: 'a later default never displaces an earlier selector match',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1' },
    solvers: [solver('labels', 'http', { matchLabels: { a: '1' } }), solver('default', 'http')],
    want: ['labels', 'http-01'],
  },
  {
    name: 'a label selector needs every pair',
    identifier: 'example.com',
    offered: [http],
    labels: { a: '1' },
    solvers: [solver('default', 'http'), solver('two', 'http', { matchLabels: { a: '1', b: '2' } })],
    want: ['default', 'http-01'],
  },
  {
    name: 'every sub-selector must match: a zone hit with a label miss is skipped',
    identifier: 'www.example.com',
    offered: [dns],
    solvers: [
      solver('default', 'dns'),
      solver('zone-label', 'dns', { dnsZones: ['example.com'], matchLabels: { a: '1' } }),
    ],
    want: ['default', 'dns-01'],
  },
  {
    name: 'zones compare case-insensitively',
    identifier: 'WWW.Example.COM',
    offered: [dns],
    solvers: [solver('default', 'dns'), solver('zone', 'dns', { dnsZones: ['example.com'] })],
    want: ['zone', 'dns-01'],
  },
];

describe('pickSolver', () => {
  for (const row of ROWS) {
    it(`picks ${row.name}`, () => {
      const picked = pickSolver(
        { identifier: row.identifier, wildcard: row.wildcard, challenges: row.offered },
        row.solvers,
        row.labels,
      );
      assert.deepEqual(picked ? [nameOf(picked.solver), picked.challenge.type] : undefined, row.want);
    });
  }

  it('hands out a copy of the solver and of the challenge, and the solver’s index', () => {
    const solvers = [solver('default', 'http')];
    const picked = pickSolver({ identifier: 'example.com', challenges: [http] }, solvers)!;
    assert.equal(picked.index, 0);
    assert.deepEqual(picked.challenge, http);
    picked.solver.http01!.ingress!.name = 'changed';
    assert.equal(solvers[0].http01!.ingress!.name, 'default');
  });
});

describe('dnsZones matching (miekg/dns CompareDomainName and CountLabel)', () => {
  it('counts shared labels from the right', () => {
    const rows: [string, string, number][] = [
      ['www.miek.nl.', 'miek.nl.', 2],
      ['www.miek.nl.', 'www.bla.nl.', 1],
      ['example.com', 'EXAMPLE.com', 2],
      // A trailing dot makes the last label differ, as in miekg/dns.
      ['example.com.', 'example.com', 0],
      ['.', 'example.com', 0],
      ['a.example.com', 'b.example.com', 2],
    ];
    for (const [a, b, n] of rows) assert.equal(compareDomainName(a, b), n, `${a} ${b}`);
    assert.equal(countLabels('example.com'), 2);
    assert.equal(countLabels('example.com.'), 2);
    assert.equal(countLabels('.'), 0);
  });

  it('matches only whole-label suffixes, weighted by the longest zone', () => {
    assert.deepEqual(matchDNSZones({}, 'a.example.com'), { matches: true, count: 0 });
    assert.deepEqual(matchDNSZones({ dnsZones: ['example.com'] }, 'a.example.com'), {
      matches: true,
      count: 2,
    });
    assert.deepEqual(matchDNSZones({ dnsZones: ['example.com'] }, 'example.com'), {
      matches: true,
      count: 2,
    });
    assert.deepEqual(matchDNSZones({ dnsZones: ['example.com'] }, 'badexample.com'), {
      matches: false,
      count: 0,
    });
    // A wildcard name is in its zone too.
    assert.deepEqual(matchDNSZones({ dnsZones: ['example.com'] }, '*.example.com'), {
      matches: true,
      count: 2,
    });
    assert.deepEqual(matchDNSZones({ dnsZones: ['a.example.com'] }, 'example.com'), {
      matches: false,
      count: 0,
    });
  });
});
