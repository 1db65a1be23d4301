import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ObjectMeta } from '@certkit/apimachinery';
import { certificatesRef } from './refs.ts';
import { requestCsr, secretCertificateFacts, secretKeyFacts, valueOf } from './parsed.ts';
import { digestToken, isFactsText } from './request-facts.ts';
import { isStrippedSecret } from './secret-facts.ts';
import {
  certificate,
  certificateRequest,
  FakeEnvironment,
  issuedStatus,
  keyPair,
  tlsSecret,
} from '@certkit/testenv/controllers/fake-environment';

const managedFields: ObjectMeta['managedFields'] = [
  {
    manager: 'kubectl',
    operation: 'Apply',
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': {} },
  },
];

describe('the context caches', () => {
  it('hold Certificates, requests and Secrets without managedFields, and otherwise as stored', async () => {
    const cert = certificate();
    const pair = await keyPair();
    const cr = certificateRequest(cert, 1, pair.csrPem, issuedStatus(pair));
    const secret = tlsSecret(cert, pair);
    const env = await FakeEnvironment.start({
      certificates: [{ ...cert, metadata: { ...cert.metadata, managedFields } }],
      requests: [{ ...cr, metadata: { ...cr.metadata, managedFields } }],
      secrets: [{ ...secret, metadata: { ...secret.metadata!, managedFields } }],
    });
    try {
      const stored = await env.client
        .resource(certificatesRef)
        .get(cert.metadata.namespace, cert.metadata.name!);
      assert.deepEqual(stored.metadata?.managedFields, managedFields, 'the server side keeps them');
      const cached = {
        certificate: env.ctx.certificates.getStore().list()[0],
        request: env.ctx.certificateRequests.getStore().list()[0],
        secret: await env.ctx.secrets.get(cert.metadata.namespace!, cert.spec.secretName),
      };
      for (const [kind, obj] of Object.entries(cached)) {
        assert.ok(obj, `${kind} cached`);
        assert.equal(obj.metadata?.managedFields, undefined, `${kind} without managedFields`);
      }
      assert.deepEqual(cached.certificate.spec, cert.spec);
      // An issued request is held without its bytes: digests in their place (docs/adr/1114).
      const { request, ...spec } = cached.request.spec;
      const { request: _request, ...expected } = cr.spec;
      assert.deepEqual(spec, expected);
      assert.ok(isFactsText(request), 'spec.request held as facts');
      assert.deepEqual(cached.request.status, {
        ...cr.status,
        certificate: digestToken(cr.status!.certificate!),
        ca: digestToken(cr.status!.ca!),
      });
      assert.deepEqual(valueOf(requestCsr(cached.request)), valueOf(requestCsr(cr)));
      assert.deepEqual(cached.request.metadata.annotations, cr.metadata.annotations);
      // A certificate Secret is held as the facts of its key and certificate (docs/adr/1140); its bytes are
      // read live.
      assert.ok(isStrippedSecret(cached.secret), 'tls.crt and tls.key held as facts');
      assert.deepEqual(
        valueOf(secretCertificateFacts(cached.secret!)),
        valueOf(secretCertificateFacts(secret)),
      );
      assert.deepEqual(valueOf(secretKeyFacts(cached.secret!)), valueOf(secretKeyFacts(secret)));
      assert.deepEqual(
        (await env.ctx.secrets.getWithData(cert.metadata.namespace!, cert.spec.secretName))!.data,
        secret.data,
      );
      assert.deepEqual(cached.secret!.metadata!.labels, secret.metadata!.labels);
      assert.deepEqual(cached.secret!.metadata!.annotations, secret.metadata!.annotations);
    } finally {
      await env.stop();
    }
  });
});
