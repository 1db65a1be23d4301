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
  /** A cache whose copy is at `version`, replaced by an own write or not; `woken` counts wake-ups. */
  const scope = (replaced = false) => {
    const state = { version: '1', woken: 0 };
    return {
      state,
      scope: {
        cachedVersion: () => state.version,
        replacedByOwnWrite: () => replaced,
        wake: () => void state.woken++,
      },
    };
  };

  it('owes nothing after a reconcile that settled', async () => {
    const wakes = new SettledWakes();
    await wakes.run('apps/web', scope().scope, async () => undefined);
    await wakes.run('apps/web', scope().scope, async () => ({ requeueAfter: 60_000 }));
    assert.equal(wakes.owes('apps/web'), false);
  });

  it('owes the next update after a requeue, a superseded write, a replaced copy or an error, once', async () => {
    const wakes = new SettledWakes();
    for (const [result, replaced] of [
      [REQUEUE, false],
      [AWAIT_EVENT, false],
      [undefined, true],
    ] as const) {
      await wakes.run('apps/web', scope(replaced).scope, async () => result);
      assert.equal(wakes.owes('apps/other'), false);
      assert.equal(wakes.owes('apps/web'), true);
      assert.equal(wakes.owes('apps/web'), false, 'paid by one event');
    }
    await assert.rejects(
      wakes.run('apps/web', scope().scope, () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(wakes.owes('apps/web'), true);
  });

  it('wakes at once when the event owed came while the reconcile ran', async () => {
    const wakes = new SettledWakes();
    for (const [result, replaced] of [
      [AWAIT_EVENT, false],
      [undefined, true],
    ] as const) {
      const { state, scope: s } = scope(replaced);
      await wakes.run('apps/web', s, async () => {
        state.version = '2'; // the winner's (or the own write's) event reached the cache meanwhile
        return result;
      });
      assert.equal(state.woken, 1);
      assert.equal(wakes.owes('apps/web'), false, 'queued instead of owed');
    }
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
