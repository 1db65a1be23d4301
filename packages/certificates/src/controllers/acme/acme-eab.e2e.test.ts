/**
 * External Account Binding end to end: Pebble requires EAB for every new account (its
 * `externalAccountBindingRequired`). An Issuer that gives its key ID and MAC key registers, and a Certificate
 * on it ends Ready; an Issuer without the binding is refused by Pebble, is not Ready with cert-manager's
 * message, and a Certificate on it is never issued (its request waits for the Issuer, no Order is made).
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import {
  ACME_ZONE,
  acmeEnvironmentSkip,
  eventually,
  startAcmeEnvironment,
  type AcmeEnvironment,
} from '@certkit/testenv/acme/acme-environment';
import type { Certificate, CertificateRequest, Issuer } from '../../api/types.ts';

const skip = acmeEnvironmentSkip();

type Condition = { type: string; status: string; reason?: string; message?: string };
const readyCondition = (obj: { status?: { conditions?: Condition[] } }) =>
  obj.status?.conditions?.find((c) => c.type === 'Ready');

function certificate(namespace: string, name: string, issuer: string, dnsNames: string[]): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace },
    spec: { secretName: `${name}-tls`, dnsNames, issuerRef: { name: issuer } },
  } as Certificate;
}

describe('ACME External Account Binding against Pebble', { skip }, () => {
  let env: AcmeEnvironment;
  before(async () => {
    env = await startAcmeEnvironment({ eabRequired: true });
  });
  after(async () => {
    await env?.close();
  });

  it('issues a Certificate from an Issuer that gives the binding', async () => {
    const ns = 'eab';
    await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } } as KubeObject);
    await env.resources.secrets.create(ns, {
      metadata: { name: 'eab-mac', namespace: ns },
      // The MAC key as the CA hands it out (unpadded base64url), itself base64-encoded as Secret data.
      data: { key: Buffer.from(env.pebble.eabKeys['kid-1']).toString('base64') },
    } as unknown as KubeObject);
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()], {
      externalAccountBinding: { keyID: 'kid-1', keySecretRef: { name: 'eab-mac', key: 'key' } },
    });
    const name = `www.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'bound', 'pebble', [name]));
    await eventually(
      async () => {
        const cert = (await env.resources.certificates.get(ns, 'bound')) as Certificate;
        return readyCondition(cert)?.status === 'True' ? cert : undefined;
      },
      'the Certificate Ready',
      90_000,
    );
    const secret = (await env.resources.secrets.get(ns, 'bound-tls')) as unknown as {
      data: Record<string, string>;
    };
    const leaf = new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
    assert.equal(leaf.subjectAltName, `DNS:${name}`);
    assert.match(leaf.issuer, /Pebble Intermediate CA/);
  });

  it('leaves an Issuer without the binding not Ready, and a Certificate on it unissued', async () => {
    const ns = 'no-eab';
    await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } } as KubeObject);
    await env.resources.issuers.create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'pebble', namespace: ns },
      spec: {
        acme: {
          server: env.pebble.directoryUrl,
          caBundle: Buffer.from(env.pebble.caBundle).toString('base64'),
          privateKeySecretRef: { name: 'pebble-account-key' },
          solvers: [env.http01Solver()],
        },
      },
    } as Issuer);
    const refused = await eventually(
      async () => {
        const issuer = (await env.resources.issuers.get(ns, 'pebble')) as Issuer;
        const ready = readyCondition(issuer as { status?: { conditions?: Condition[] } });
        return ready?.status === 'False' ? ready : undefined;
      },
      'the Issuer not Ready',
      30_000,
    );
    assert.equal(refused.reason, 'ErrRegisterACMEAccount');
    assert.match(
      refused.message ?? '',
      /^Failed to register ACME account: 403 urn:ietf:params:acme:error:externalAccountRequired: /,
    );

    await env.resources.certificates.create(ns, certificate(ns, 'unbound', 'pebble', [`a.${ACME_ZONE}`]));
    const pending = await eventually(
      async () => {
        const list = (await env.resources.requests.list(ns)).items as CertificateRequest[];
        return list.find((r) => readyCondition(r)?.reason === 'Pending');
      },
      'the CertificateRequest Pending',
      30_000,
    );
    assert.equal(
      readyCondition(pending)?.message,
      'Referenced issuer does not have a Ready status condition',
    );
    // A while later still: no Order was made, the Certificate is not Ready and has no Secret.
    await sleep(3_000);
    assert.equal((await env.resources.orders.list(ns)).items.length, 0, 'no Order');
    const cert = (await env.resources.certificates.get(ns, 'unbound')) as Certificate;
    assert.notEqual(readyCondition(cert)?.status, 'True');
    await assert.rejects(env.resources.secrets.get(ns, 'unbound-tls'), /not found/);
    const request = (await env.resources.requests.get(ns, pending.metadata.name!)) as CertificateRequest;
    assert.equal(readyCondition(request)?.reason, 'Pending');
  });
});
