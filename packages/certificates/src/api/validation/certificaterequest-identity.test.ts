import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError, type KubeObject } from '@certkit/apimachinery';
import { certManagerAdmission, certManagerMutation } from '../admission.ts';
import type { CertificateRequest } from '../types.ts';

const GROUP = 'cert-manager.io';
const CSR = Buffer.from('not parsed here').toString('base64');

const alice = {
  name: 'alice',
  uid: 'u-1',
  groups: ['developers', 'system:authenticated'],
  extra: { scopes: ['a', 'b'] },
};

function request(spec: Partial<CertificateRequest['spec']> = {}): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'r', namespace: 'apps' },
    spec: { issuerRef: { name: 'ca' }, request: CSR, ...spec },
  } as CertificateRequest;
}

/** The identity errors alone (the CSR here is not a real one, so the spec check adds its own). */
const identityErrors = (errors: ReturnType<typeof certManagerAdmission>) =>
  errors.filter((e) => /^spec\.(uid|username|groups|extra)$/.test(e.field)).map(formatFieldError);

describe('CertificateRequest requester identity', () => {
  it('overwrites what the client claimed with the requester on create', () => {
    const cr = request({ username: 'mallory', uid: 'x', groups: ['system:masters'], extra: { k: ['v'] } });
    certManagerMutation(GROUP, 'CertificateRequest', cr as KubeObject, alice);
    assert.deepEqual(
      { username: cr.spec.username, uid: cr.spec.uid, groups: cr.spec.groups, extra: cr.spec.extra },
      { username: 'alice', uid: 'u-1', groups: alice.groups, extra: alice.extra },
    );
    // Copies: a later change to the request's user cannot reach the stored object.
    assert.notEqual(cr.spec.groups, alice.groups);
  });

  it('writes an empty uid and no extra for a user without them', () => {
    const cr = request({ extra: { k: ['v'] } });
    certManagerMutation(GROUP, 'CertificateRequest', cr as KubeObject, { name: 'bob', groups: [] });
    assert.equal(cr.spec.uid, '');
    assert.deepEqual(cr.spec.groups, []);
    assert.equal('extra' in cr.spec, false);
  });

  it('leaves other kinds and groups alone', () => {
    const other = { apiVersion: 'example.com/v1', kind: 'CertificateRequest', spec: {} } as KubeObject;
    certManagerMutation('example.com', 'CertificateRequest', other, alice);
    const certificate = { kind: 'Certificate', spec: {} } as KubeObject;
    certManagerMutation(GROUP, 'Certificate', certificate, alice);
    assert.deepEqual([other.spec, certificate.spec], [{}, {}]);
  });

  it("refuses a create whose identity is not the requester's, unordered lists compared as sets", () => {
    const forged = request({ username: 'mallory', uid: 'u-1', groups: ['system:masters'] });
    assert.deepEqual(
      identityErrors(
        certManagerAdmission(GROUP, 'CertificateRequest', forged as KubeObject, undefined, undefined, alice),
      ),
      [
        'spec.username: Forbidden: username identity must be that of the requester',
        'spec.groups: Forbidden: groups identity must be that of the requester',
        'spec.extra: Forbidden: extra identity must be that of the requester',
      ],
    );
    const reordered = request({
      username: 'alice',
      uid: 'u-1',
      groups: ['system:authenticated', 'developers'],
      extra: { scopes: ['b', 'a'] },
    });
    assert.deepEqual(
      identityErrors(
        certManagerAdmission(
          GROUP,
          'CertificateRequest',
          reordered as KubeObject,
          undefined,
          undefined,
          alice,
        ),
      ),
      [],
    );
  });

  it('skips the create check when the write has no user (no requester to compare with)', () => {
    const cr = request({ username: 'anyone' });
    assert.deepEqual(
      identityErrors(certManagerAdmission(GROUP, 'CertificateRequest', cr as KubeObject, undefined)),
      [],
    );
  });

  it('refuses an update that changes any of the four fields, but not a reordering of groups', () => {
    const stored = request();
    certManagerMutation(GROUP, 'CertificateRequest', stored as KubeObject, alice);
    const changed = structuredClone(stored);
    changed.spec.uid = 'u-2';
    changed.spec.username = 'mallory';
    changed.spec.groups = ['system:masters'];
    changed.spec.extra = {};
    const errors = certManagerAdmission(
      GROUP,
      'CertificateRequest',
      changed as KubeObject,
      stored as KubeObject,
    );
    assert.deepEqual(errors.map(formatFieldError), [
      'spec.uid: Forbidden: uid identity cannot be changed once set',
      'spec.username: Forbidden: username identity cannot be changed once set',
      'spec.groups: Forbidden: groups identity cannot be changed once set',
      'spec.extra: Forbidden: extra identity cannot be changed once set',
      'spec: Forbidden: cannot change spec after creation',
    ]);
    const reordered = structuredClone(stored);
    reordered.spec.groups = [...alice.groups].reverse();
    assert.deepEqual(
      identityErrors(
        certManagerAdmission(GROUP, 'CertificateRequest', reordered as KubeObject, stored as KubeObject),
      ),
      [],
    );
  });
});
