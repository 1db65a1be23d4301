import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { certificate, condition } from '@certkit/testenv/controllers/fake-environment';
import type { Certificate } from '../../api/types.ts';
import { AWAIT_EVENT, OwnEchoes, REQUEUE } from './shared/status.ts';
import { onlyReadinessOutputsChanged, SettledWakes } from './wake-filter.ts';

const issuing = condition('Issuing', 'True', 'DoesNotExist');
const at = (cert: Certificate, resourceVersion: string): Certificate => ({
  ...cert,
  metadata: { ...cert.metadata, resourceVersion },
});

describe('onlyReadinessOutputsChanged', () => {
  const before = certificate({}, { nextPrivateKeySecretName: 'web-next', conditions: [issuing] });

  it('is true for Ready and the validity dates alone', () => {
    const after = certificate(
      {},
      {
        nextPrivateKeySecretName: 'web-next',
        notAfter: '2030-01-01T00:00:00Z',
        renewalTime: '2029-10-01T00:00:00Z',
        conditions: [issuing, condition('Ready', 'False', 'DoesNotExist')],
      },
    );
    assert.equal(onlyReadinessOutputsChanged(at(before, '1'), at(after, '2')), true);
  });

  it('is false for anything else a sub-controller may decide on', () => {
    const changed: Certificate[] = [
      certificate({}, { nextPrivateKeySecretName: 'other', conditions: [issuing] }),
      certificate({}, { nextPrivateKeySecretName: 'web-next' }),
      certificate({}, { revision: 1, nextPrivateKeySecretName: 'web-next', conditions: [issuing] }),
      { ...before, metadata: { ...before.metadata, generation: 2 } },
      { ...before, metadata: { ...before.metadata, annotations: { a: 'b' } } },
      { ...before, metadata: { ...before.metadata, labels: { a: 'b' } } },
      { ...before, metadata: { ...before.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
    ];
    for (const after of changed) assert.equal(onlyReadinessOutputsChanged(before, after), false);
  });
});

describe('SettledWakes', () => {
  it('owes nothing after a reconcile that settled', async () => {
    const wakes = new SettledWakes();
    await wakes.run('apps/web', async () => undefined, false);
    await wakes.run('apps/web', async () => ({ requeueAfter: 60_000 }), false);
    assert.equal(wakes.owes('apps/web'), false);
  });

  it('owes the next update after a requeue, a superseded write, a replaced copy or an error, once', async () => {
    const wakes = new SettledWakes();
    for (const [result, replaced] of [
      [REQUEUE, false],
      [AWAIT_EVENT, false],
      [undefined, true],
    ] as const) {
      await wakes.run('apps/web', async () => result, replaced);
      assert.equal(wakes.owes('apps/web'), true);
      assert.equal(wakes.owes('apps/web'), false, 'paid by one event');
    }
    await assert.rejects(
      wakes.run('apps/web', () => Promise.reject(new Error('boom')), false),
      /boom/,
    );
    assert.equal(wakes.owes('apps/web'), true);
  });

  it('lets every update through while a reconcile of the Certificate runs', async () => {
    const wakes = new SettledWakes();
    let finish!: () => void;
    const running = wakes.run('apps/web', () => new Promise<void>((r) => (finish = r)), false);
    assert.equal(wakes.owes('apps/web'), true);
    assert.equal(wakes.owes('apps/other'), false);
    finish();
    await running;
    assert.equal(wakes.owes('apps/web'), false);
  });
});

describe('OwnEchoes', () => {
  const cert = certificate();
  it('knows the update its own write made, once, and nothing else', () => {
    const echoes = new OwnEchoes();
    echoes.wrote('apps/web', '1', '2');
    assert.equal(echoes.isEcho(at(cert, '2'), at(cert, '3')), false, 'another write');
    echoes.wrote('apps/web', '1', '2');
    assert.equal(echoes.isEcho(at(cert, '1'), at(cert, '2')), true);
    assert.equal(echoes.isEcho(at(cert, '1'), at(cert, '2')), false, 'once');
    echoes.wrote('apps/web', '1', '3');
    assert.equal(echoes.isEcho(at(cert, '2'), at(cert, '3')), false, 'someone wrote in between');
  });
});
