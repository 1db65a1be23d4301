/**
 * Which Certificate sub-controllers an event wakes (index.ts): the trigger, the request manager and the
 * revision manager only for a Certificate in the state their reconcile acts on; the others for every event.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Controller } from '@certkit/runtime';
import {
  certificate,
  condition,
  FakeEnvironment,
  NAMESPACE,
} from '@certkit/testenv/controllers/fake-environment';
import type { Certificate, CertificateStatus } from '../../api/types.ts';
import { certificatesRef } from '../refs.ts';
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

/** Waits until the key manager, which every Certificate event wakes, has been woken by the next one. */
async function nextEvent(controllers: Controller[]): Promise<string[]> {
  const keyManager = controllers.find((c) => c.name === KEY_MANAGER_CONTROLLER)!;
  for (let i = 0; i < 200 && keyManager.queue.len === 0; i++) await new Promise((r) => setTimeout(r, 10));
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
});
