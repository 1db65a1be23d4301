import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linkTargets, parseRetryAfter } from './headers.ts';
import { NoncePool } from './nonce-pool.ts';
import { AcmeProblemError } from './problem.ts';

describe('Retry-After', () => {
  const now = Date.parse('2026-01-02T03:04:05Z');
  it('reads delay-seconds and HTTP-dates, and ignores the rest', () => {
    assert.equal(parseRetryAfter('120', now)?.toISOString(), '2026-01-02T03:06:05.000Z');
    assert.equal(parseRetryAfter(['0'], now)?.getTime(), now);
    assert.equal(
      parseRetryAfter('Fri, 02 Jan 2026 04:00:00 GMT', now)?.toISOString(),
      '2026-01-02T04:00:00.000Z',
    );
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });
});

describe('Link', () => {
  const base = 'https://ca.example/certZ/abc';
  it('finds rel="alternate" targets across repeated headers and comma-separated values', () => {
    const header = [
      '<https://ca.example/dir>;rel="index", </certZ/abc/1>; rel="alternate"',
      '<https://ca.example/certZ/abc/2>;rel=alternate',
    ];
    assert.deepEqual(linkTargets(header, 'alternate', base), [
      'https://ca.example/certZ/abc/1',
      'https://ca.example/certZ/abc/2',
    ]);
    assert.deepEqual(linkTargets(header, 'index', base), ['https://ca.example/dir']);
  });

  it('matches one of several space-separated relations, case-insensitively; commas inside <> do not split', () => {
    assert.deepEqual(linkTargets('<https://x.example/a,b>; REL="up Alternate"', 'alternate', base), [
      'https://x.example/a,b',
    ]);
    assert.deepEqual(linkTargets('<https://x.example/a>; rel="up"', 'alternate', base), []);
    assert.deepEqual(linkTargets(undefined, 'alternate', base), []);
  });
});

describe('nonce pool', () => {
  it('hands out the newest nonce first, each once, and keeps a bounded number', () => {
    const pool = new NoncePool(2);
    pool.add('a');
    pool.add(undefined);
    pool.add('b');
    pool.add('c');
    assert.equal(pool.size, 2);
    assert.equal(pool.take(), 'c');
    assert.equal(pool.take(), 'b');
    assert.equal(pool.take(), undefined);
    pool.add('d');
    pool.clear();
    assert.equal(pool.take(), undefined);
  });
});

describe('ACME problems', () => {
  it('prints status, type, detail and subproblems, and keeps them as fields', () => {
    const error = new AcmeProblemError({
      status: 400,
      url: 'https://ca.example/order',
      problem: {
        type: 'urn:ietf:params:acme:error:malformed',
        detail: 'Some of the identifiers requested were rejected',
        subproblems: [
          {
            type: 'urn:ietf:params:acme:error:rejectedIdentifier',
            detail: 'This CA will not issue for "example.net"',
            identifier: { type: 'dns', value: 'example.net' },
          },
        ],
      },
    });
    assert.equal(
      error.message,
      '400 urn:ietf:params:acme:error:malformed: Some of the identifiers requested were rejected; ' +
        'dns:example.net: urn:ietf:params:acme:error:rejectedIdentifier: This CA will not issue for "example.net"',
    );
    assert.equal(error.subproblems[0].identifier?.value, 'example.net');
    assert.ok(error.is('urn:ietf:params:acme:error:malformed'));
    assert.equal(error.isClientError, true);
  });

  it('treats 429 and 5xx as retryable and a missing document as about:blank', () => {
    const limited = new AcmeProblemError({ status: 429, url: 'u', problem: undefined });
    assert.equal(limited.type, 'about:blank');
    assert.equal(limited.isClientError, false);
    assert.equal(new AcmeProblemError({ status: 503, url: 'u', problem: {} }).isClientError, false);
  });
});
