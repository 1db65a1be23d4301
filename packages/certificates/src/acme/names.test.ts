import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChallengeSpec, OrderSpec } from '../api/acme-types.ts';
import { ACMEChallengeSolver, encodeGo, OrderSpec as GoOrderSpec } from './go-json.ts';
import { challengeName, computeName, fnv1_32, orderName } from './names.ts';

/**
 * FNV-1 32 from its definition (offset basis 2166136261, prime 16777619, multiply then xor), in BigInt
 * arithmetic so that it shares nothing with the implementation under test.
 */
function referenceFnv1(text: string): number {
  let hash = 2166136261n;
  for (const byte of Buffer.from(text, 'utf8')) hash = ((hash * 16777619n) % 2n ** 32n) ^ BigInt(byte);
  return Number(hash);
}

const issuerRef = { name: 'letsencrypt', kind: 'ClusterIssuer', group: 'cert-manager.io' };

describe('fnv1_32', () => {
  it('matches the published FNV-1 32-bit test vectors (not FNV-1a)', () => {
    const rows: [string, number][] = [
      ['', 0x811c9dc5],
      ['a', 0x050c5d7e],
      ['foobar', 0x31f0b262],
    ];
    for (const [text, hash] of rows) assert.equal(fnv1_32(Buffer.from(text)), hash, JSON.stringify(text));
    // FNV-1a of "a" would be 0xe40c292c.
    assert.notEqual(fnv1_32(Buffer.from('a')), 0xe40c292c);
  });

  it('agrees with the BigInt reference on longer, non-ASCII input', () => {
    for (const text of ['x'.repeat(1000), 'ünïcödé ☃ 𝄞', '{"request":null}']) {
      assert.equal(fnv1_32(Buffer.from(text, 'utf8')), referenceFnv1(text));
    }
  });
});

describe('the Go JSON that is hashed', () => {
  it('writes an OrderSpec in Go field order, request as null, empty omitempty fields dropped', () => {
    const spec: OrderSpec = {
      request: 'LS0tLS1CRUdJTi==',
      issuerRef,
      commonName: 'example.com',
      dnsNames: ['example.com', 'www.example.com'],
      ipAddresses: [],
      profile: '',
    };
    assert.equal(
      encodeGo({ ...spec, request: null }, GoOrderSpec),
      '{"request":null,"issuerRef":{"name":"letsencrypt","kind":"ClusterIssuer","group":"cert-manager.io"},"commonName":"example.com","dnsNames":["example.com","www.example.com"]}',
    );
  });

  it('re-formats durations as time.Duration.String and escapes <, >, & as Go does', () => {
    const spec = { request: null, issuerRef: { name: 'a<b>&c' }, duration: '90m', replaces: 'x\u2028y' };
    assert.equal(
      encodeGo(spec, GoOrderSpec),
      '{"request":null,"issuerRef":{"name":"a\\u003cb\\u003e\\u0026c"},"duration":"1h30m0s","replaces":"x\\u2028y"}',
    );
  });

  it('hashes a duration Go could not have read as written, instead of failing', () => {
    assert.equal(
      encodeGo({ request: null, issuerRef: { name: 'i' }, duration: '90d' }, GoOrderSpec),
      '{"request":null,"issuerRef":{"name":"i"},"duration":"90d"}',
    );
  });

  it('writes a solver with struct values always present and map keys sorted', () => {
    const solver = {
      selector: { matchLabels: { z: '1', a: '2' } },
      dns01: { rfc2136: { nameserver: '10.0.0.53' } },
      waitInsteadOfSelfCheck: '30s',
    };
    // rfc2136.tsigSecretSecretRef is a struct value: Go writes it (name always, key omitempty) even when unset.
    assert.equal(
      encodeGo(solver, ACMEChallengeSolver),
      '{"selector":{"matchLabels":{"a":"2","z":"1"}},"dns01":{"rfc2136":{"nameserver":"10.0.0.53","tsigSecretSecretRef":{"name":""}}},"waitInsteadOfSelfCheck":"30s"}',
    );
    assert.equal(
      encodeGo({ http01: { ingress: { class: '', podTemplate: { spec: {} } } } }, ACMEChallengeSolver),
      // A set pointer to "" is kept; podTemplate's metadata is a struct value, written though absent.
      '{"http01":{"ingress":{"class":"","podTemplate":{"metadata":{},"spec":{}}}}}',
    );
  });
});

describe('orderName', () => {
  const spec: OrderSpec = {
    request: 'LS0tLS1CRUdJTi==',
    issuerRef,
    commonName: 'example.com',
    dnsNames: ['example.com', 'www.example.com'],
  };
  const hashed =
    '{"request":null,"issuerRef":{"name":"letsencrypt","kind":"ClusterIssuer","group":"cert-manager.io"},"commonName":"example.com","dnsNames":["example.com","www.example.com"]}';

  it('is the request name, "-", and FNV-1 of the spec without the CSR', () => {
    assert.equal(orderName('web-1', spec), `web-1-${referenceFnv1(hashed)}`);
    assert.equal(orderName('web-1', spec), 'web-1-1778478136');
  });

  it('does not depend on the CSR, does depend on everything else', () => {
    assert.equal(orderName('web-1', { ...spec, request: 'b3RoZXI=' }), orderName('web-1', spec));
    for (const changed of [
      { ...spec, dnsNames: ['example.com'] },
      { ...spec, issuerRef: { ...issuerRef, kind: 'Issuer' } },
      { ...spec, duration: '1h' },
      { ...spec, profile: 'shortlived' },
      { ...spec, replaces: 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE' },
    ]) {
      assert.notEqual(orderName('web-1', changed), orderName('web-1', spec));
    }
  });

  it('hashes a request name of 52 characters or more together with the spec, and cuts the prefix', () => {
    const long = `${'r'.repeat(51)}-x-1`;
    const wrapped = `{"certificateRequestName":"${long}","spec":${hashed}}`;
    assert.equal(orderName(long, spec), `${'r'.repeat(51)}-${referenceFnv1(wrapped)}`);
    const at52 = 'q'.repeat(52);
    assert.equal(
      orderName(at52, spec),
      `${at52}-${referenceFnv1(`{"certificateRequestName":"${at52}","spec":${hashed}}`)}`,
    );
    // One shorter is hashed alone.
    const at51 = 'q'.repeat(51);
    assert.equal(orderName(at51, spec), `${at51}-${referenceFnv1(hashed)}`);
    // At most 63 characters: a DNS label.
    assert.ok(orderName('z'.repeat(253), spec).length <= 63);
  });
});

describe('challengeName', () => {
  const spec: Omit<ChallengeSpec, 'key'> = {
    url: 'https://acme.example.com/chall/1',
    authorizationURL: 'https://acme.example.com/authz/1',
    dnsName: 'example.com',
    wildcard: false,
    type: 'HTTP-01',
    token: 'DGyRejmCefe7v4NfDGDKfA',
    solver: { http01: { ingress: { ingressClassName: 'nginx' } } },
    issuerRef,
  };
  const hashed =
    '{"url":"https://acme.example.com/chall/1","authorizationURL":"https://acme.example.com/authz/1","dnsName":"example.com","wildcard":false,"type":"HTTP-01","token":"DGyRejmCefe7v4NfDGDKfA","key":"","solver":{"http01":{"ingress":{"ingressClassName":"nginx"}}},"issuerRef":{"name":"letsencrypt","kind":"ClusterIssuer","group":"cert-manager.io"}}';

  it('is the Order name, "-", and FNV-1 of the spec with an empty key and the whole solver', () => {
    assert.equal(challengeName('web-1-1778478136', spec), `web-1-1778478136-${referenceFnv1(hashed)}`);
  });

  it('ignores the key (it is computed after naming) but not the solver or the wildcard flag', () => {
    assert.equal(challengeName('o', { ...spec, key: 'k.thumb' }), challengeName('o', spec));
    assert.notEqual(challengeName('o', { ...spec, wildcard: true }), challengeName('o', spec));
    assert.notEqual(
      challengeName('o', { ...spec, solver: { http01: { ingress: { ingressClassName: 'traefik' } } } }),
      challengeName('o', spec),
    );
    // An absent wildcard is Go's false.
    const { wildcard: _, ...withoutWildcard } = spec;
    assert.equal(challengeName('o', withoutWildcard as typeof spec), challengeName('o', spec));
  });

  it('cuts a long Order name to 52 characters before the hash', () => {
    const name = challengeName(`${'o'.repeat(52)}-1234567890`, spec);
    assert.equal(name, computeName('o'.repeat(52), hashed));
    assert.ok(name.length <= 63);
  });
});
