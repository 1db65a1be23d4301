/**
 * Which Certificate sub-controllers an event wakes (index.ts): the trigger, the request manager and the
 * revision manager only for a Certificate in the state their reconcile acts on; the issuing controller, between
 * issuances, only for events that may change what it does there; the others for every event.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Controller } from '@certkit/runtime';
import {
  certificate,
  certificateRequest,
  condition,
  FakeEnvironment,
  NAMESPACE,
} from '@certkit/testenv/controllers/fake-environment';
import type { Certificate, CertificateRequest, CertificateStatus } from '../../api/types.ts';
import { certificateRequestsRef, certificatesRef } from '../refs.ts';
import { issuingReconciler } from './issuing/issuing.ts';
import { updateStatus } from './shared/status.ts';
import {
  ISSUING_CONTROLLER,
  KEY_MANAGER_CONTROLLER,
  READINESS_CONTROLLER,
  registerCertificateControllers,
  REQUEST_MANAGER_CONTROLLER,
  REVISION_MANAGER_CONTROLLER,
  TRIGGER_CONTROLLER,
} from './index.ts';

const ALL = [
  TRIGGER_CONTROLLER,
  KEY_MANAGER_CONTROLLER,
  REQUEST_MANAGER_CONTROLLER,
  ISSUING_CONTROLLER,
  READINESS_CONTROLLER,
  REVISION_MANAGER_CONTROLLER,
];

/** Takes everything queued off each controller's queue: the controllers woken, by name. */
async function woken(controllers: Controller[]): Promise<string[]> {
  const names: string[] = [];
  for (const c of controllers) {
    let taken = false;
    while (c.queue.len > 0) {
      const key = await c.queue.get();
      c.queue.done(key!);
      assert.equal(key, `${NAMESPACE}/web`);
      taken = true;
    }
    if (taken) names.push(c.name);
  }
  return names;
}

/**
 * Waits until `by` (the key manager, which every Certificate event wakes; readiness for a request's) has been
 * woken by the next event.
 */
async function nextEvent(controllers: Controller[], by = KEY_MANAGER_CONTROLLER): Promise<string[]> {
  const witness = controllers.find((c) => c.name === by)!;
  for (let i = 0; i < 200 && witness.queue.len === 0; i++) await new Promise((r) => setTimeout(r, 10));
  return woken(controllers);
}

describe('Certificate sub-controllers woken by events', () => {
  it('wake the trigger, the request manager and the revision manager only for the state they act on', async () => {
    const env = await FakeEnvironment.start({ certificates: [certificate()] });
    const controllers = registerCertificateControllers(env.ctx);
    const certificates = env.client.resource<Certificate>(certificatesRef);
    const writeStatus = async (status: CertificateStatus) => {
      const cert = await certificates.get(NAMESPACE, 'web');
      await certificates.update({ ...cert, status }, { subresource: 'status' });
    };
    try {
      // A new Certificate: neither issuing nor Ready.
      assert.deepEqual(
        await nextEvent(controllers),
        ALL.filter((n) => n !== REQUEST_MANAGER_CONTROLLER && n !== REVISION_MANAGER_CONTROLLER),
      );
      await writeStatus({ conditions: [condition('Issuing', 'True', 'DoesNotExist')] });
      assert.deepEqual(
        await nextEvent(controllers),
        ALL.filter((n) => n !== TRIGGER_CONTROLLER && n !== REVISION_MANAGER_CONTROLLER),
      );
      await writeStatus({ revision: 1, conditions: [condition('Ready', 'True', 'Ready')] });
      assert.deepEqual(
        await nextEvent(controllers),
        ALL.filter((n) => n !== REQUEST_MANAGER_CONTROLLER),
      );
      // Between issuances, another controller's status write cannot change what issuing does (it keeps the
      // Secret in line with the spec): it is not woken. A change of spec wakes it.
      await writeStatus({ revision: 1, conditions: [condition('Ready', 'True', 'Ready', 'again')] });
      assert.deepEqual(
        await nextEvent(controllers),
        ALL.filter((n) => n !== REQUEST_MANAGER_CONTROLLER && n !== ISSUING_CONTROLLER),
      );
      const current = await certificates.get(NAMESPACE, 'web');
      await certificates.update({ ...current, spec: { ...current.spec, commonName: 'changed.example' } });
      assert.deepEqual(
        await nextEvent(controllers),
        ALL.filter((n) => n !== REQUEST_MANAGER_CONTROLLER),
      );
      // Deleted: nothing for the three to do.
      await certificates.delete(NAMESPACE, 'web');
      assert.deepEqual(await nextEvent(controllers), [
        KEY_MANAGER_CONTROLLER,
        ISSUING_CONTROLLER,
        READINESS_CONTROLLER,
      ]);
    } finally {
      for (const c of controllers) c.queue.shutDown();
      await env.stop();
    }
  });

  it('wake the issuing controller for a request’s event only while issuing', async () => {
    const cert = certificate();
    const env = await FakeEnvironment.start({
      certificates: [cert],
      requests: [certificateRequest(cert, 1, '')],
    });
    const controllers = registerCertificateControllers(env.ctx);
    const certificates = env.client.resource<Certificate>(certificatesRef);
    const requests = env.client.resource<CertificateRequest>(certificateRequestsRef);
    const touchRequest = async (value: string) => {
      await requests.patch(NAMESPACE, 'web-1', 'merge', { metadata: { annotations: { touched: value } } });
      return nextEvent(controllers, READINESS_CONTROLLER);
    };
    try {
      await nextEvent(controllers);
      assert.ok(!(await touchRequest('1')).includes(ISSUING_CONTROLLER), 'not while not issuing');
      const current = await certificates.get(NAMESPACE, 'web');
      await certificates.update(
        { ...current, status: { conditions: [condition('Issuing', 'True', 'DoesNotExist')] } },
        { subresource: 'status' },
      );
      await nextEvent(controllers);
      assert.ok((await touchRequest('2')).includes(ISSUING_CONTROLLER), 'while issuing');
    } finally {
      for (const c of controllers) c.queue.shutDown();
      await env.stop();
    }
  });

  it('wake the issuing controller for its owed event after it stood aside on a replaced copy', async () => {
    const env = await FakeEnvironment.start({ certificates: [certificate()] });
    const controllers = registerCertificateControllers(env.ctx);
    const certificates = env.client.resource<Certificate>(certificatesRef);
    const store = env.ctx.certificates.getStore();
    try {
      await nextEvent(controllers);
      // A status write of this process (readiness's, say) replaces the cached copy; the reconcile that runs
      // on that copy before the watch catches up stands aside (docs/adr/1015).
      const replaced = store.list()[0];
      const ready = [condition('Ready', 'False', 'DoesNotExist')];
      assert.equal(await updateStatus(env.ctx, replaced, (status) => (status.conditions = ready)), 'written');
      await nextEvent(controllers);
      store.update(replaced);
      assert.equal(await env.reconcile(issuingReconciler(env.ctx)), undefined);
      // The next status-only update between issuances would not wake issuing, but this one is owed to it.
      const current = await certificates.get(NAMESPACE, 'web');
      const again = [condition('Ready', 'False', 'DoesNotExist', 'again')];
      await certificates.update({ ...current, status: { conditions: again } }, { subresource: 'status' });
      assert.ok((await nextEvent(controllers)).includes(ISSUING_CONTROLLER), 'owed');
      const latest = await certificates.get(NAMESPACE, 'web');
      const third = [condition('Ready', 'False', 'DoesNotExist', 'third')];
      await certificates.update({ ...latest, status: { conditions: third } }, { subresource: 'status' });
      assert.ok(!(await nextEvent(controllers)).includes(ISSUING_CONTROLLER), 'owed once');
    } finally {
      for (const c of controllers) c.queue.shutDown();
      await env.stop();
    }
  });
});
