import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DAY, rootCa } from '@certkit/testenv/pki/ca';
import { decodePemBlocks } from '../pki/pem.ts';
import { mergeCABundle } from './bundle.ts';

const ders = (pem: Buffer) => decodePemBlocks(pem).map((b) => b.der.toString('base64'));

describe('mergeCABundle (CAInjectorMerging)', async () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const a = await rootCa(undefined, 365 * DAY, now);
  const b = await rootCa(undefined, 365 * DAY, now);
  const expiredCa = await rootCa(undefined, DAY, new Date('2026-01-01T00:00:00Z'));
  const pemA = Buffer.from(a.certPem);
  const pemB = Buffer.from(b.certPem);

  it('appends a new CA after the ones the bundle holds', () => {
    assert.deepEqual(ders(mergeCABundle(pemA, pemB, now)), [...ders(pemA), ...ders(pemB)]);
  });

  it('adds a CA already there only once, and leaves the bundle as it was', () => {
    const merged = mergeCABundle(Buffer.concat([pemA, pemB]), pemA, now);
    assert.deepEqual(ders(merged), [...ders(pemA), ...ders(pemB)]);
    assert.equal(mergeCABundle(merged, pemB, now).toString(), merged.toString());
  });

  it('drops expired certificates, old and new', () => {
    const withExpired = Buffer.concat([Buffer.from(expiredCa.certPem), pemA]);
    assert.deepEqual(ders(mergeCABundle(withExpired, pemB, now)), [...ders(pemA), ...ders(pemB)]);
    assert.deepEqual(ders(mergeCABundle(pemA, Buffer.from(expiredCa.certPem), now)), ders(pemA));
  });

  it('takes the new data as it is when there is no bundle yet', () => {
    assert.deepEqual(ders(mergeCABundle(undefined, pemA, now)), ders(pemA));
    assert.deepEqual(ders(mergeCABundle(Buffer.alloc(0), pemA, now)), ders(pemA));
  });

  it('replaces a bundle that is not certificates, and keeps new data that is not either', () => {
    assert.equal(mergeCABundle(Buffer.from('not pem'), pemB, now), pemB);
    const garbage = Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    assert.equal(mergeCABundle(pemA, garbage, now), garbage);
  });

  it('writes PEM as Go’s encoding/pem does: 64-column lines, one block after another', () => {
    const text = mergeCABundle(pemA, pemB, now).toString();
    assert.match(text, /^-----BEGIN CERTIFICATE-----\n/);
    for (const line of text.split('\n')) assert.ok(line.length <= 64 || line.startsWith('-----'));
    assert.equal(text.match(/-----END CERTIFICATE-----\n/g)?.length, 2);
  });
});
