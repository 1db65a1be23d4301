import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { certificate, FakeEnvironment, NAMESPACE } from '@certkit/testenv/controllers/fake-environment';
import type { Certificate, CertificateStatus } from '../../../api/types.ts';
import { liveCertificate } from './gather.ts';
import { type ConditionValue, setCertificateCondition, updateStatus } from './status.ts';

describe('setCertificateCondition', () => {
  const now = new Date('2030-01-01T00:00:00.500Z');
  const issuing: ConditionValue = { type: 'Issuing', status: 'True', reason: 'DoesNotExist', message: 'm' };

  it('sets observedGeneration from the Certificate read, and leaves it out without one', () => {
    const status: CertificateStatus = {};
    setCertificateCondition(status, issuing, 4, now);
    assert.deepEqual(status.conditions, [
      { ...issuing, lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 4 },
    ]);
    setCertificateCondition(status, { ...issuing, reason: 'Expired' }, undefined, new Date('2031-01-01Z'));
    assert.deepEqual(status.conditions, [
      { ...issuing, reason: 'Expired', lastTransitionTime: '2030-01-01T00:00:00Z' },
    ]);
  });

  it('replaces the status’s list rather than changing the one it held', () => {
    const held = Object.freeze([
      Object.freeze({ type: 'Ready', status: 'True' as const, lastTransitionTime: '2029-01-01T00:00:00Z' }),
    ]);
    const status: CertificateStatus = { conditions: held as CertificateStatus['conditions'] };
    setCertificateCondition(
      status,
      { type: 'Ready', status: 'False', reason: 'Expired', message: 'x' },
      1,
      now,
    );
    assert.notEqual(status.conditions, held);
    assert.equal(held[0].status, 'True');
    assert.deepEqual(status.conditions, [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Expired',
        message: 'x',
        lastTransitionTime: '2030-01-01T00:00:00Z',
        observedGeneration: 1,
      },
    ]);
  });

  it('writes only type, status, reason and message of the value given', () => {
    const status: CertificateStatus = {};
    const violation = { ...issuing, windowError: 'not for the API' } as ConditionValue;
    setCertificateCondition(status, violation, 1, now);
    assert.deepEqual(Object.keys(status.conditions![0]).sort(), [
      'lastTransitionTime',
      'message',
      'observedGeneration',
      'reason',
      'status',
      'type',
    ]);
  });
});

describe('updateStatus', () => {
  const ready = (reason: string) => (status: CertificateStatus) =>
    setCertificateCondition(
      status,
      { type: 'Ready', status: 'False', reason, message: reason },
      1,
      new Date(),
    );

  /** An environment with one Certificate, whose status updates are counted as they are sent. */
  async function counting() {
    const env = await FakeEnvironment.start({ certificates: [certificate()] });
    const client = env.ctx.certificateClient;
    const sent: string[] = [];
    env.ctx.certificateClient = Object.assign(Object.create(client) as typeof client, {
      update: (obj: Certificate, options: Parameters<typeof client.update>[1]) => {
        sent.push(obj.metadata.resourceVersion ?? '');
        return client.update(obj, options);
      },
    });
    const cached = () => liveCertificate(env.ctx, { namespace: NAMESPACE, name: 'web' })!;
    return { env, sent, cached };
  }

  it('answers a write from a version its own write already replaced as a conflict, without sending it', async () => {
    const { env, sent, cached } = await counting();
    try {
      const stale = cached();
      // Two sub-controllers acting on the same version at once: the second waits for the first's answer.
      const answers = await Promise.all([
        updateStatus(env.ctx, stale, ready('First')),
        updateStatus(env.ctx, stale, ready('Second')),
      ]);
      assert.deepEqual(answers, ['written', 'conflict']);
      assert.deepEqual(sent, [stale.metadata.resourceVersion], 'one request sent');
      // And later, before the watch has brought the new version.
      assert.equal(await updateStatus(env.ctx, stale, ready('Third')), 'conflict');
      assert.equal(sent.length, 1);
      const stored = await env.client
        .resource<Certificate>(env.ctx.certificateClient.ref)
        .get(NAMESPACE, 'web');
      assert.equal(
        stored.status?.conditions?.[0]?.reason,
        'First',
        'what the server holds is the first write',
      );
      // A write from the newer version is sent as usual.
      assert.equal(await updateStatus(env.ctx, stored, ready('Fourth')), 'written');
      assert.equal(sent.length, 2);
    } finally {
      await env.stop();
    }
  });

  it('sends a write whose version only failed writes were based on', async () => {
    const { env, sent, cached } = await counting();
    try {
      const stale = cached();
      // Someone else's write moves the Certificate on: this process's write from the old version is refused.
      await env.client
        .resource<Certificate>(env.ctx.certificateClient.ref)
        .update({ ...stale, status: { conditions: [] } }, { subresource: 'status' });
      assert.equal(await updateStatus(env.ctx, stale, ready('Refused')), 'conflict');
      // Nothing says the next write from that version would be refused too but the server: it is asked.
      assert.equal(await updateStatus(env.ctx, stale, ready('Again')), 'conflict');
      assert.equal(sent.length, 2, 'both writes were sent');
    } finally {
      await env.stop();
    }
  });
});
