import type {
  Certificate,
  CertificateRequest,
  Challenge,
  ClusterIssuer,
  Issuer,
  Order,
} from '@certkit/certificates/api/types';
import {
  challengesRef,
  clusterIssuersRef,
  issuersRef,
  ordersRef,
} from '@certkit/certificates/controllers/refs';
import type { KubeClient } from '@certkit/runtime';

/**
 * The ACME part of `certkit status certificate NAME`, as cmctl prints it after the CertificateRequest: the
 * request's Order (state, reason, authorizations, failure time) and that Order's Challenges (type, token,
 * key, state, reason, processing, presented). A Challenge's reason is where an ACME issuance that hangs says
 * why (a solver that cannot present, a self-check that does not pass), so it belongs in this one view. Only
 * for an issuer with `spec.acme`, and only while there is a request, as cmctl.
 */
export async function acmeLines(
  client: KubeClient,
  cert: Certificate,
  request: CertificateRequest | undefined,
): Promise<string[]> {
  if (!request || !(await isAcmeIssuer(client, cert))) return [];
  const namespace = request.metadata.namespace;
  let order: Order | undefined;
  try {
    const orders = await client.resource<Order>(ordersRef).list(namespace);
    const owned = orders.items.filter((o) => ownedBy(o, request.metadata.uid));
    if (owned.length > 1) {
      return [
        `error when finding Order: found multiple orders owned by CertificateRequest ${request.metadata.name}`,
      ];
    }
    order = owned[0];
  } catch (err) {
    return [`error when finding Order: ${(err as Error).message}`];
  }
  if (!order) return ['No Order found for this Certificate'];
  const lines = [
    'Order:',
    `  Name: ${order.metadata.name}`,
    `  State: ${order.status?.state ?? ''}, Reason: ${order.status?.reason ?? ''}`,
  ];
  const authorizations = order.status?.authorizations ?? [];
  if (authorizations.length === 0) lines.push('  No Authorizations for this Order');
  else {
    lines.push('  Authorizations:');
    for (const a of authorizations) {
      const wildcard = a.wildcard === undefined ? 'nil (bool pointer not set)' : String(a.wildcard);
      lines.push(
        `    URL: ${a.url}, Identifier: ${a.identifier ?? ''}, Initial State: ${a.initialState ?? ''}, Wildcard: ${wildcard}`,
      );
    }
  }
  if (order.status?.failureTime) lines.push(`  FailureTime: ${order.status.failureTime}`);
  return [...lines, ...(await challengeLines(client, order))];
}

async function challengeLines(client: KubeClient, order: Order): Promise<string[]> {
  let challenges: Challenge[];
  try {
    const list = await client.resource<Challenge>(challengesRef).list(order.metadata.namespace);
    challenges = list.items.filter((ch) => ownedBy(ch, order.metadata.uid));
  } catch (err) {
    return [`error when finding Challenges: ${(err as Error).message}`];
  }
  if (challenges.length === 0) return ['No Challenges found for this Certificate'];
  return [
    'Challenges:',
    ...challenges.map(
      (ch) =>
        `- Name: ${ch.metadata.name}, Type: ${ch.spec.type}, Token: ${ch.spec.token}, Key: ${ch.spec.key}, ` +
        `State: ${ch.status?.state ?? ''}, Reason: ${ch.status?.reason ?? ''}, ` +
        `Processing: ${ch.status?.processing === true}, Presented: ${ch.status?.presented === true}`,
    ),
  ];
}

function ownedBy(obj: Order | Challenge, uid: string | undefined): boolean {
  return uid !== undefined && (obj.metadata.ownerReferences ?? []).some((o) => o.uid === uid);
}

async function isAcmeIssuer(client: KubeClient, cert: Certificate): Promise<boolean> {
  const ref = cert.spec.issuerRef;
  if ((ref.group ?? 'cert-manager.io') !== 'cert-manager.io') return false;
  try {
    const issuer =
      (ref.kind ?? 'Issuer') === 'ClusterIssuer'
        ? await client.resource<ClusterIssuer>(clusterIssuersRef).get(undefined, ref.name)
        : await client.resource<Issuer>(issuersRef).get(cert.metadata.namespace, ref.name);
    return issuer.spec?.acme !== undefined;
  } catch {
    // The Issuer part of the view already says it is missing or unreadable.
    return false;
  }
}
