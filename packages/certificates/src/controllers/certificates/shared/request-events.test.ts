import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateRequest } from '../../../api/types.ts';
import { onlyPendingMessageChanged } from './request-events.ts';

function request(
  ready: { status: 'True' | 'False'; reason: string; message: string },
  more: Partial<CertificateRequest['status']> = {},
  resourceVersion = '1',
): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'web-1', namespace: 'ns', resourceVersion, annotations: { a: 'b' } },
    spec: { request: 'Q1NS', issuerRef: { name: 'acme' } },
    status: {
      conditions: [
        { type: 'Approved', status: 'True', reason: 'cert-manager.io', message: 'approved' },
        { type: 'Ready', lastTransitionTime: '2026-01-01T00:00:00Z', ...ready },
      ],
      ...more,
    },
  } as CertificateRequest;
}

const pending = (message: string, rv = '1') =>
  request({ status: 'False', reason: 'Pending', message }, {}, rv);

describe('onlyPendingMessageChanged', () => {
  it('is true when a Pending request only changes its message (an ACME Order moving on)', () => {
    assert.equal(
      onlyPendingMessageChanged(pending('order: "pending"', '1'), pending('order: "ready"', '2')),
      true,
    );
  });

  it('is false for any change a Certificate controller may read', () => {
    const before = pending('order: "pending"');
    // Pending → Issued, Pending → Failed.
    assert.equal(
      onlyPendingMessageChanged(before, request({ status: 'True', reason: 'Issued', message: 'done' })),
      false,
    );
    assert.equal(
      onlyPendingMessageChanged(
        before,
        request({ status: 'False', reason: 'Failed', message: 'order: "invalid"' }),
      ),
      false,
    );
    // The message and something else changed: the certificate, another condition, an annotation.
    assert.equal(
      onlyPendingMessageChanged(
        before,
        request({ status: 'False', reason: 'Pending', message: 'x' }, { certificate: 'Y2VydA==' }),
      ),
      false,
    );
    const denied = pending('order: "ready"');
    denied.status!.conditions!.push({ type: 'Denied', status: 'True', reason: 'r', message: 'm' });
    assert.equal(onlyPendingMessageChanged(before, denied), false);
    const annotated = pending('order: "ready"');
    annotated.metadata.annotations = { a: 'c' };
    assert.equal(onlyPendingMessageChanged(before, annotated), false);
    // No change to the message at all (a resync, a metadata-only write): woken as before.
    assert.equal(onlyPendingMessageChanged(before, pending('order: "pending"', '2')), false);
  });
});
