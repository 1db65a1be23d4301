/**
 * The issuing controller no longer holds its worker until the Secret cache shows the certificate it wrote
 * (docs/adr/1181): it records the write, and the readers of the Secret stand aside while their cache does not
 * show it yet. Here the Certificate is at the status the issuing controller's completion wrote (revision 1,
 * Issuing gone) and the Secret cache has not caught up with the Secret written just before: without the
 * record, the trigger would issue again (Secret "does not exist") and readiness would write Ready=False; with
 * it, they write nothing and requeue, and once the Secret reaches the cache they judge it as written.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { builtins, type Reconciler } from '@certkit/runtime';
import type { KubeObject } from '@certkit/apimachinery';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate } from '../../api/types.ts';
import {
  certificate,
  certificateRequest,
  FakeEnvironment,
  issuedStatus,
  keyPair,
  type KeyPair,
  NAMESPACE,
  tlsSecret,
} from '@certkit/testenv/controllers/fake-environment';
import { eventually } from '@certkit/testenv/eventually';
import type { ControllerContext } from '../context.ts';
import { issuingReconciler } from './issuing/issuing.ts';
import { readinessReconciler } from './readiness/readiness.ts';
import { expectOwnSecretWrite, OWN_SECRET_WRITE_WAIT_MS } from './shared/own-secret-writes.ts';
import { triggerReconciler } from './trigger/trigger.ts';

const STATUS = 'update certificates.cert-manager.io/status web';

let pair: KeyPair;

before(async () => {
  pair = await keyPair();
});

/** As the issuing controller's completion left it: revision 1, Issuing removed. */
const completed = (): Certificate => certificate({}, { revision: 1 });

async function environment(): Promise<{ env: FakeEnvironment; cert: Certificate; secret: Secret }> {
  const cert = completed();
  const env = await FakeEnvironment.start({
    certificates: [cert],
    requests: [certificateRequest(cert, 1, pair.csrPem, issuedStatus(pair))],
  });
  return { env, cert, secret: tlsSecret(cert, pair) };
}

/** The Secret as the issuing controller's write stored it, and once the cache shows it. */
async function secretReachesCache(env: FakeEnvironment, secret: Secret): Promise<void> {
  await env.client
    .resource<Secret & KubeObject>(builtins.secrets)
    .create(NAMESPACE, secret as Secret & KubeObject);
  await eventually(() => env.ctx.secrets.get(NAMESPACE, secret.metadata!.name!), 'the Secret cached');
}

const readers: { name: string; reconciler: (ctx: ControllerContext) => Reconciler }[] = [
  { name: 'certificates-trigger', reconciler: (ctx) => triggerReconciler(ctx) },
  { name: 'certificates-readiness', reconciler: (ctx) => readinessReconciler(ctx) },
];

describe('the readers of an issued Secret the cache does not show yet', () => {
  for (const reader of readers) {
    it(`${reader.name} writes a status from the stale cache without the record of the write`, async () => {
      // The case the record exists for: what each reader would do without it.
      const { env } = await environment();
      try {
        await env.reconcile(reader.reconciler(env.ctx));
        assert.deepEqual(env.writes(), [STATUS]);
      } finally {
        await env.stop();
      }
    });

    it(`${reader.name} stands aside until the cache shows the write, then judges the Secret written`, async () => {
      const { env, cert, secret } = await environment();
      try {
        expectOwnSecretWrite(env.ctx, NAMESPACE, cert.spec.secretName, secret.data!['tls.crt']);
        const result = await env.reconcile(reader.reconciler(env.ctx));
        assert.deepEqual(env.writes(), [], 'nothing judged from the stale cache');
        assert.ok(
          result?.requeueAfter !== undefined &&
            result.requeueAfter > 0 &&
            result.requeueAfter <= OWN_SECRET_WRITE_WAIT_MS,
          `requeued within the wait: ${JSON.stringify(result)}`,
        );

        await secretReachesCache(env, secret);
        await env.reconcile(reader.reconciler(env.ctx));
        const writes = env.writes().slice(1);
        if (reader.name === 'certificates-trigger') {
          assert.deepEqual(writes, [], 'no second issuance');
        } else {
          assert.deepEqual(writes, [STATUS]);
          const ready = env.lastStatus()?.conditions?.find((c) => c.type === 'Ready');
          assert.equal(ready?.status, 'True', 'Ready from the Secret as written');
        }
      } finally {
        await env.stop();
      }
    });
  }

  it('certificates-issuing stands aside too, without reading anything', async () => {
    const { env, cert, secret } = await environment();
    try {
      expectOwnSecretWrite(env.ctx, NAMESPACE, cert.spec.secretName, secret.data!['tls.crt']);
      const actions = env.client.actions.length;
      const result = await env.reconcile(issuingReconciler(env.ctx));
      assert.ok(result?.requeueAfter, `requeued: ${JSON.stringify(result)}`);
      assert.deepEqual(env.client.actions.slice(actions), []);
    } finally {
      await env.stop();
    }
  });
});
