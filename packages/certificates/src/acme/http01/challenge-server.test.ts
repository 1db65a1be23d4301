import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostWithoutPort, PresentedChallenges } from './challenge-server.ts';
import { challengeUrl } from './self-check.ts';

describe('hostWithoutPort (the Host header as the acmesolver reads it)', () => {
  const rows: [string | undefined, string][] = [
    ['example.com', 'example.com'],
    ['example.com:80', 'example.com'],
    ['example.com:', 'example.com'],
    ['192.0.2.1:8080', '192.0.2.1'],
    ['[2001:db8::1]:80', '2001:db8::1'],
    ['[2001:db8::1]', '[2001:db8::1]'],
    ['2001:db8::1', '2001:db8::1'],
    ['', ''],
    [undefined, ''],
  ];
  for (const [header, host] of rows) {
    it(`${JSON.stringify(header)} → ${JSON.stringify(host)}`, () =>
      assert.equal(hostWithoutPort(header), host));
  }
});

describe('PresentedChallenges', () => {
  it('keys each token by host, case-insensitively, IPv6 with or without brackets', () => {
    const presented = new PresentedChallenges();
    presented.present('t1', 'WWW.example.com', 'k1');
    presented.present('t1', 'other.example.com', 'k1-other');
    presented.present('t2', '2001:db8::1', 'k2');
    assert.equal(presented.lookup('t1', 'www.EXAMPLE.com'), 'k1');
    assert.equal(presented.lookup('t1', 'other.example.com'), 'k1-other');
    assert.equal(presented.lookup('t1', 'third.example.com'), undefined);
    assert.equal(presented.lookup('t2', '[2001:db8::1]'), 'k2');
    assert.equal(presented.size, 3);
    presented.remove('t1', 'www.example.com');
    assert.equal(presented.lookup('t1', 'www.example.com'), undefined);
    assert.equal(presented.lookup('t1', 'other.example.com'), 'k1-other');
    presented.remove('t1', 'other.example.com');
    presented.remove('t1', 'other.example.com');
    presented.remove('never', 'x');
    assert.equal(presented.size, 1);
  });
});

describe('challengeUrl', () => {
  it('is port 80 unless told otherwise, IPv6 bracketed', () => {
    assert.equal(challengeUrl('example.com', 'tok'), 'http://example.com/.well-known/acme-challenge/tok');
    assert.equal(
      challengeUrl('example.com', 'tok', 5002),
      'http://example.com:5002/.well-known/acme-challenge/tok',
    );
    assert.equal(challengeUrl('2001:db8::1', 'tok'), 'http://[2001:db8::1]/.well-known/acme-challenge/tok');
    assert.equal(challengeUrl('192.0.2.1', 'tok', 80), 'http://192.0.2.1/.well-known/acme-challenge/tok');
  });
});
