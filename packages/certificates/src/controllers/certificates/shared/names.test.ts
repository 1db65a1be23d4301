import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { annotationsToCopy, certificateRequestName } from './names.ts';

describe('CertificateRequest names', () => {
  it('is <certificate>-<revision> for names up to 233 characters', () => {
    assert.equal(certificateRequestName('web', 1), 'web-1');
    const name = 'a'.repeat(233);
    assert.equal(certificateRequestName(name, 12), `${name}-12`);
  });

  it('hashes longer names: a DNS-safe 168-character prefix and the SHA-256 of the whole name', () => {
    const name = `${'a'.repeat(167)}.${'b'.repeat(100)}`;
    const hash = createHash('sha256').update(name).digest('hex');
    // The cut falls right after the '.', which cannot end a name: the prefix stops at the last letter.
    assert.equal(certificateRequestName(name, 3), `${'a'.repeat(167)}-${hash}-3`);
    assert.ok(certificateRequestName(name, 3).length <= 253);
  });
});

describe('annotationsToCopy', () => {
  it('copies everything but kubectl, Flux and Argo CD annotations by default', () => {
    const copied = annotationsToCopy({
      'example.com/a': '1',
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
      'fluxcd.io/sync': 'x',
      'argocd.argoproj.io/tracking-id': 'y',
      plain: 'z',
    });
    assert.deepEqual(copied, { 'example.com/a': '1', plain: 'z' });
  });

  it('follows explicit prefixes', () => {
    assert.deepEqual(annotationsToCopy({ 'a/x': '1', 'b/y': '2' }, ['a/']), { 'a/x': '1' });
    assert.deepEqual(annotationsToCopy(undefined), {});
  });
});
