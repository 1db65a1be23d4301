import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OwnerReference } from '@certkit/apimachinery';
import type { Certificate, CleanupPolicy } from '../../../api/types.ts';
import {
  certificateOwnerReference,
  desiredOwnerReferences,
  effectiveCleanupPolicy,
  ownerReferenceMismatch,
} from './owner-reference.ts';

const cert = (cleanupPolicy?: CleanupPolicy): Certificate => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'apps', uid: 'uid-1' },
  spec: {
    secretName: 'web-tls',
    issuerRef: { name: 'ca' },
    dnsNames: ['web.example'],
    ...(cleanupPolicy ? { cleanupPolicy } : {}),
  },
});

describe('effectiveCleanupPolicy', () => {
  it('takes the field when set, whatever the default (4 combinations)', () => {
    const table: [CleanupPolicy, CleanupPolicy, CleanupPolicy][] = [
      // [spec.cleanupPolicy, --default-secret-cleanup-policy, effective]
      ['OnDelete', 'Never', 'OnDelete'],
      ['OnDelete', 'OnDelete', 'OnDelete'],
      ['Never', 'Never', 'Never'],
      ['Never', 'OnDelete', 'Never'],
    ];
    for (const [field, defaultPolicy, expected] of table) {
      assert.equal(
        effectiveCleanupPolicy(cert(field), { defaultSecretCleanupPolicy: defaultPolicy }),
        expected,
        `field ${field}, default ${defaultPolicy}`,
      );
    }
  });

  it('falls back to the default policy when the field is empty', () => {
    assert.equal(effectiveCleanupPolicy(cert(), { defaultSecretCleanupPolicy: 'Never' }), 'Never');
    assert.equal(effectiveCleanupPolicy(cert(), { defaultSecretCleanupPolicy: 'OnDelete' }), 'OnDelete');
  });

  it('lets the deprecated --enable-certificate-owner-ref win over field and default when given', () => {
    const table: [boolean, CleanupPolicy | undefined, CleanupPolicy, CleanupPolicy][] = [
      // [flag, field, default, effective]
      [true, 'Never', 'Never', 'OnDelete'],
      [true, undefined, 'Never', 'OnDelete'],
      [true, 'OnDelete', 'OnDelete', 'OnDelete'],
      [false, 'OnDelete', 'OnDelete', 'Never'],
      [false, undefined, 'OnDelete', 'Never'],
      [false, 'Never', 'Never', 'Never'],
    ];
    for (const [flag, field, defaultPolicy, expected] of table) {
      assert.equal(
        effectiveCleanupPolicy(cert(field), {
          enableCertificateOwnerRef: flag,
          defaultSecretCleanupPolicy: defaultPolicy,
        }),
        expected,
        `flag ${flag}, field ${field}, default ${defaultPolicy}`,
      );
    }
  });
});

describe('owner references on the Secret', () => {
  const expected: OwnerReference = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    name: 'web',
    uid: 'uid-1',
    controller: true,
    blockOwnerDeletion: true,
  };
  const other: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'uid-cm' };
  const stale: OwnerReference = { ...expected, uid: 'uid-old' };

  it('builds the controller reference of NewControllerRef', () => {
    assert.deepEqual(certificateOwnerReference(cert()), expected);
  });

  it('OnDelete keeps exactly one reference, in place, keeping other owners and replacing a deleted namesake', () => {
    assert.deepEqual(desiredOwnerReferences(undefined, cert(), 'OnDelete'), [expected]);
    assert.deepEqual(desiredOwnerReferences([other], cert(), 'OnDelete'), [other, expected]);
    assert.deepEqual(desiredOwnerReferences([stale, other], cert(), 'OnDelete'), [expected, other]);
    assert.deepEqual(desiredOwnerReferences([expected, other], cert(), 'OnDelete'), [expected, other]);
    assert.deepEqual(desiredOwnerReferences([stale, expected], cert(), 'OnDelete'), [expected]);
    assert.deepEqual(
      desiredOwnerReferences([{ ...expected, blockOwnerDeletion: false }], cert(), 'OnDelete'),
      [expected],
    );
  });

  it('Never removes the reference and leaves other owners', () => {
    assert.equal(desiredOwnerReferences([expected], cert(), 'Never'), undefined);
    assert.deepEqual(desiredOwnerReferences([other, expected], cert(), 'Never'), [other]);
    assert.equal(desiredOwnerReferences(undefined, cert(), 'Never'), undefined);
  });

  it('reports a mismatch only when the references disagree with the policy', () => {
    const secret = (refs?: OwnerReference[]) => ({
      metadata: { name: 'web-tls', ...(refs ? { ownerReferences: refs } : {}) },
    });
    assert.equal(ownerReferenceMismatch(secret([expected]), cert(), 'OnDelete'), undefined);
    assert.equal(ownerReferenceMismatch(secret([other, expected]), cert(), 'OnDelete'), undefined);
    assert.match(ownerReferenceMismatch(secret(), cert(), 'OnDelete')!, /missing/);
    assert.match(ownerReferenceMismatch(secret([stale]), cert(), 'OnDelete')!, /missing/);
    assert.match(
      ownerReferenceMismatch(secret([{ ...expected, controller: false }]), cert(), 'OnDelete')!,
      /missing/,
    );
    assert.equal(ownerReferenceMismatch(secret([other]), cert(), 'Never'), undefined);
    assert.equal(ownerReferenceMismatch(secret(), cert(), 'Never'), undefined);
    assert.match(ownerReferenceMismatch(secret([expected]), cert(), 'Never')!, /should not/);
  });
});
