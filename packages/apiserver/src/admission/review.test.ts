import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidResponseError, reviewVersion, verifyResponse } from './review.ts';
import { deniedError } from './errors.ts';

const v1 = (response: Record<string, unknown>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response,
});
const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/a', value: 1 }])).toString('base64');

describe('AdmissionReview answers', () => {
  it('prefer v1, and take v1beta1 when it is all a webhook lists', () => {
    assert.equal(reviewVersion(['v1beta1', 'v1']), 'v1beta1');
    assert.equal(reviewVersion(['v2', 'v1']), 'v1');
    assert.equal(reviewVersion(['v2']), undefined);
  });

  it('are checked as kube-apiserver checks them', () => {
    const bad = (version: string, mutating: boolean, body: unknown, message: string) =>
      assert.throws(
        () => verifyResponse(version, 'u', mutating, body),
        (err: Error) => {
          assert.ok(err instanceof InvalidResponseError);
          assert.equal(err.message, message);
          return true;
        },
      );
    bad(
      'v1',
      false,
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      'webhook response was absent',
    );
    bad(
      'v1',
      false,
      { ...v1({ uid: 'u' }), apiVersion: 'v1' },
      'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got v1, Kind=AdmissionReview',
    );
    bad('v1', false, v1({ uid: 'other', allowed: true }), 'expected response.uid="u", got "other"');
    bad(
      'v1',
      true,
      v1({ uid: 'u', allowed: true, patch }),
      'webhook returned response.patch but not response.patchType',
    );
    bad(
      'v1',
      true,
      v1({ uid: 'u', allowed: true, patchType: 'JSONPatch' }),
      'webhook returned response.patchType but not response.patch',
    );
    bad(
      'v1',
      false,
      v1({ uid: 'u', allowed: true, patch, patchType: 'JSONPatch' }),
      'validating webhooks may not return response.patch',
    );
  });

  it('decode a JSON patch; v1beta1 answers need no uid and default the patch type', () => {
    const result = verifyResponse(
      'v1',
      'u',
      true,
      v1({ uid: 'u', allowed: true, patch, patchType: 'JSONPatch', warnings: ['w'] }),
    );
    assert.deepEqual(result.patch, [{ op: 'add', path: '/a', value: 1 }]);
    assert.deepEqual(result.warnings, ['w']);
    const beta = verifyResponse('v1beta1', 'u', true, { response: { allowed: true, patch } });
    assert.deepEqual(beta.patch, [{ op: 'add', path: '/a', value: 1 }]);
  });

  it("turn a denial into kube-apiserver's message, with at least 400", () => {
    assert.equal(deniedError('w.example.com', { code: 403, message: 'no' }).status.code, 403);
    assert.equal(deniedError('w.example.com', { code: 200, message: 'no' }).status.code, 400);
    assert.equal(
      deniedError('w.example.com', { reason: 'Forbidden' }).status.message,
      'admission webhook "w.example.com" denied the request: Forbidden',
    );
    assert.equal(
      deniedError('w.example.com', undefined).status.message,
      'admission webhook "w.example.com" denied the request without explanation',
    );
  });
});
