/**
 * Which CertificateRequest signers a request's event wakes (signer.ts): only the one whose issuer type the
 * request's issuer has, the SelfSigned signer for what no in-tree signer takes (a missing issuer), none for a
 * foreign issuer group, whatever the event (the request's, its issuer's, the SelfSigned signer's key
 * Secret's); and an issuer changing its type wakes the signer of the new type.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Controller } from '@certkit/runtime';
import { certificate, FakeEnvironment, NAMESPACE } from '@certkit/testenv/controllers/fake-environment';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Annotations } from '../../api/constants.ts';
import type { CertificateRequest, Issuer } from '../../api/types.ts';
import { certificateRequestsRef, issuersRef } from '../refs.ts';
import { registerCertificateRequestControllers } from './index.ts';

const SELFSIGNED = 'certificaterequests-issuer-selfsigned';
const CA = 'certificaterequests-issuer-ca';
const ACME = 'certificaterequests-issuer-acme';
const SIGNERS = [SELFSIGNED, CA, ACME];

function issuer(name: string, spec: Issuer['spec']): Issuer {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name, namespace: NAMESPACE },
    spec,
  } as Issuer;
}

function request(name: string, issuerRef: CertificateRequest['spec']['issuerRef']): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    // All name one private key Secret, which the SelfSigned signer watches.
    metadata: { name, namespace: NAMESPACE, annotations: { [Annotations.privateKeySecretName]: 'key' } },
    spec: { request: 'LS0tLQ==', issuerRef },
  } as CertificateRequest;
}

/** Takes everything queued off the signers' queues: for each request name, the signers woken for it. */
async function woken(controllers: Controller[]): Promise<Record<string, string[]>> {
  // Events are dispatched on later turns: let them arrive.
  await new Promise((r) => setTimeout(r, 100));
  const byRequest: Record<string, string[]> = {};
  for (const c of controllers.filter((c) => SIGNERS.includes(c.name))) {
    while (c.queue.len > 0) {
      const key = (await c.queue.get())!;
      c.queue.done(key);
      const name = key.slice(NAMESPACE.length + 1);
      (byRequest[name] ??= []).push(c.name);
    }
  }
  for (const names of Object.values(byRequest)) names.sort();
  return byRequest;
}

describe('CertificateRequest signers woken by events', () => {
  it('wake only the signer of the issuer type, the SelfSigned one for a missing issuer, none for a foreign group', async () => {
    const env = await FakeEnvironment.start({
      certificates: [certificate()],
      issuers: [
        issuer('ca', { ca: { secretName: 'ca-key-pair' } }),
        issuer('self', { selfSigned: {} }),
        issuer('acme', {
          acme: { server: 'https://acme.example/dir', privateKeySecretRef: { name: 'acme-account' } },
        } as Issuer['spec']),
      ],
      requests: [
        request('to-ca', { name: 'ca' }),
        request('to-self', { name: 'self' }),
        request('to-acme', { name: 'acme' }),
        request('to-missing', { name: 'nowhere' }),
        request('to-foreign', { name: 'x', kind: 'Issuer', group: 'example.com' }),
      ],
    });
    const controllers = registerCertificateRequestControllers(env.ctx);
    try {
      assert.deepEqual(await woken(controllers), {
        'to-ca': [CA],
        'to-self': [SELFSIGNED],
        'to-acme': [ACME],
        'to-missing': [SELFSIGNED],
      });

      // The private key Secret the SelfSigned signer watches wakes it only for its own requests.
      const secrets = env.client.resource<Secret & KubeObject>(builtins.secrets);
      await secrets.create(NAMESPACE, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'key', namespace: NAMESPACE, labels: { 'controller.cert-manager.io/fao': 'true' } },
        data: {},
      });
      assert.deepEqual(await woken(controllers), { 'to-self': [SELFSIGNED], 'to-missing': [SELFSIGNED] });

      // A request's own update wakes the same one signer.
      const requests = env.client.resource<CertificateRequest>(certificateRequestsRef);
      const toCa = await requests.get(NAMESPACE, 'to-ca');
      await requests.update({ ...toCa, metadata: { ...toCa.metadata, labels: { changed: 'yes' } } });
      assert.deepEqual(await woken(controllers), { 'to-ca': [CA] });

      // The issuer 'self' becomes a CA issuer: its request is the CA signer's now, and the CA signer is woken.
      const issuers = env.client.resource<Issuer>(issuersRef);
      const self = await issuers.get(NAMESPACE, 'self');
      await issuers.update({ ...self, spec: { ca: { secretName: 'ca-key-pair' } } });
      const afterTypeChange = await woken(controllers);
      assert.ok(afterTypeChange['to-self']?.includes(CA), JSON.stringify(afterTypeChange));
      const toSelf = await requests.get(NAMESPACE, 'to-self');
      await requests.update({ ...toSelf, metadata: { ...toSelf.metadata, labels: { changed: 'yes' } } });
      assert.deepEqual(await woken(controllers), { 'to-self': [CA] });
    } finally {
      for (const c of controllers) c.queue.shutDown();
      await env.stop();
    }
  });
});
