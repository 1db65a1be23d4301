/**
 * ACME issuance end to end: Certificates on an ACME Issuer against a real Pebble, HTTP-01 answered by the
 * controller's embedded listener and DNS-01 written into a real BIND with RFC 2136, through the embedded API
 * server and the whole certificate controller. Pebble rejects its default 5 % of nonces and validates at once
 * (PEBBLE_VA_NOSLEEP); it resolves every name through BIND.
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import {
  ACME_ZONE,
  acmeEnvironmentSkip,
  eventually,
  startAcmeEnvironment,
  type AcmeEnvironment,
} from '@certkit/testenv/acme/acme-environment';
import type { Certificate, CertificateRequest, Challenge, Order } from '../../api/types.ts';

const skip = acmeEnvironmentSkip();

function readyCondition(obj: {
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}) {
  return obj.status?.conditions?.find((c) => c.type === 'Ready');
}

function certificate(namespace: string, name: string, issuer: string, dnsNames: string[]): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace },
    spec: { secretName: `${name}-tls`, dnsNames, issuerRef: { name: issuer } },
  } as Certificate;
}

describe('ACME issuance against Pebble and BIND', { skip }, () => {
  let env: AcmeEnvironment;
  before(async () => {
    env = await startAcmeEnvironment();
  });
  after(async () => {
    await env?.close();
  });

  async function issued(namespace: string, name: string, timeoutMs = 90_000): Promise<Certificate> {
    return eventually(
      async () => {
        const cert = (await env.resources.certificates.get(namespace, name)) as Certificate;
        return readyCondition(cert)?.status === 'True' ? cert : undefined;
      },
      `Certificate ${namespace}/${name} Ready`,
      timeoutMs,
    );
  }

  async function leafOf(namespace: string, secretName: string): Promise<X509Certificate> {
    const secret = (await env.resources.secrets.get(namespace, secretName)) as unknown as {
      data: Record<string, string>;
    };
    return new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
  }

  async function ordersIn(namespace: string): Promise<Order[]> {
    return (await env.resources.orders.list(namespace)).items as Order[];
  }

  async function challengesIn(namespace: string): Promise<Challenge[]> {
    return (await env.resources.challenges.list(namespace)).items as Challenge[];
  }

  async function noChallengesLeft(namespace: string): Promise<void> {
    await eventually(
      async () => ((await challengesIn(namespace)).length === 0 ? true : undefined),
      `no Challenges left in ${namespace}`,
      30_000,
    );
  }

  async function eventReasons(namespace: string, name: string): Promise<string[]> {
    const list = await env.admin.resource(builtins.events).list(namespace);
    return (list.items as unknown as { involvedObject: { name: string }; reason: string }[])
      .filter((e) => e.involvedObject.name === name)
      .map((e) => e.reason);
  }

  it('issues a single-name Certificate through HTTP-01 on the embedded listener', async () => {
    const ns = 'http01';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    const name = `www.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'web', 'pebble', [name]));
    await issued(ns, 'web');

    const leaf = await leafOf(ns, 'web-tls');
    assert.equal(leaf.subjectAltName, `DNS:${name}`);
    assert.match(leaf.issuer, /Pebble Intermediate CA/);

    const [order] = await ordersIn(ns);
    assert.equal(order.status?.state, 'valid');
    assert.ok(order.status?.certificate, 'the Order keeps the chain');
    assert.equal(order.metadata.ownerReferences?.[0]?.kind, 'CertificateRequest');
    const request = (await env.resources.requests.list(ns)).items[0] as CertificateRequest;
    assert.equal(readyCondition(request)?.reason, 'Issued');
    assert.equal(request.status?.ca, undefined, 'ACME gives no CA');
    await noChallengesLeft(ns);

    const requestEvents = await eventReasons(ns, request.metadata.name!);
    assert.ok(requestEvents.includes('OrderCreated'), requestEvents.join());
    assert.ok(requestEvents.includes('CertificateIssued'), requestEvents.join());
    const orderEvents = await eventReasons(ns, order.metadata.name!);
    assert.ok(orderEvents.includes('Created') && orderEvents.includes('Complete'), orderEvents.join());
    const challengeEvents = (await env.admin.resource(builtins.events).list(ns)).items as unknown as {
      involvedObject: { kind: string };
      reason: string;
    }[];
    const reasons = challengeEvents.filter((e) => e.involvedObject.kind === 'Challenge').map((e) => e.reason);
    for (const reason of ['Started', 'Presented', 'DomainVerified']) {
      assert.ok(reasons.includes(reason), `Challenge event ${reason} in ${reasons.join()}`);
    }
  });
});
