import { isAlreadyExists, isNotFound, newControllerRef } from '@certkit/apimachinery';
import { keyFor } from '@certkit/runtime';
import { ACME_API_VERSION, ACME_FAILURE_STATES, AcmeKinds } from '../../api/acme-constants.ts';
import { API_VERSION, Kinds } from '../../api/constants.ts';
import type { CertificateRequest, IssuerReference, Order, OrderSpec } from '../../api/types.ts';
import type { RequestFacts } from '../request-facts.ts';
import { orderName } from '../../acme/names.ts';
import type { ControllerContext } from '../context.ts';
import type { IssuerHandle } from '../issuers/generic.ts';
import { certificateHasPublicKey, parsedCertificatePem, requestCsr, valueOf } from '../parsed.ts';
import type { StatusDraft } from './draft.ts';
import type { SignOutcome, Signer } from './signer.ts';

/**
 * The ACME signer (cert-manager's certificaterequests/acme): an approved request on an ACME issuer gets an
 * Order, named from a hash of its spec and owned by the request, and waits for the Orders controller to
 * bring that Order to `valid` with a certificate; a failed Order fails the request. A request whose Order
 * was deleted creates it again on its next sync. While it waits, nothing polls: as upstream, the Order's
 * events bring the request back (`watchOrders`), so a pending outcome asks for no retry.
 */

/** The Order a request asks for (buildOrder): the CSR's names, the issuer ref, and the duration if enabled. */
export function orderSpecFor(cr: CertificateRequest, handle: IssuerHandle): OrderSpec | SignOutcome {
  let csr;
  try {
    // Parsed once per request content (the signer comes back at every Order change).
    csr = valueOf(requestCsr(cr));
  } catch (err) {
    return requestParsingError(err);
  }
  return orderSpecOf(cr.spec.request, csr, cr.spec.issuerRef, cr.spec.duration, handle);
}

/** A CSR that does not parse, as the ACME signers fail it. */
export function requestParsingError(err: unknown): SignOutcome {
  return {
    failed: {
      reason: 'RequestParsingError',
      message: `Failed to decode CSR in spec.request: ${(err as Error).message}`,
    },
  };
}

/**
 * The Order for a parsed CSR (`request`, base64 PEM), whoever asks: a CertificateRequest, or a Kubernetes
 * CertificateSigningRequest (certificatesigningrequests/acme.ts). `duration` is a Go duration, sent only when
 * the issuer enables it.
 */
export function orderSpecOf(
  request: string,
  csr: Pick<RequestFacts, 'commonName' | 'dnsNames' | 'ipAddresses'>,
  issuerRef: IssuerReference,
  duration: string | undefined,
  handle: IssuerHandle,
): OrderSpec | SignOutcome {
  const commonName = csr.commonName;
  // ACME certificates carry their names as SANs only: a CN must be one of them (cert-manager's InvalidOrder).
  if (commonName && !csr.dnsNames.includes(commonName) && !csr.ipAddresses.includes(commonName)) {
    return {
      failed: {
        reason: 'InvalidOrder',
        message:
          'The CSR PEM requests a commonName that is not present in the list of dnsNames or ipAddresses. ' +
          'If a commonName is set, ACME requires that the value is also present in the list of dnsNames or ipAddresses: ' +
          `"${commonName}" does not exist in [${csr.dnsNames.join(' ')}] or [${csr.ipAddresses.join(' ')}]`,
      },
    };
  }
  const acme = handle.issuer.spec?.acme;
  const spec: OrderSpec = { request, issuerRef: { ...issuerRef } };
  if (commonName) spec.commonName = commonName;
  if (csr.dnsNames.length) spec.dnsNames = [...csr.dnsNames];
  if (csr.ipAddresses.length) spec.ipAddresses = [...csr.ipAddresses];
  if (acme?.enableDurationFeature && duration) spec.duration = duration;
  if (acme?.profile) spec.profile = acme.profile;
  return spec;
}

export function isOrderFailed(order: Order): boolean {
  return (ACME_FAILURE_STATES as readonly string[]).includes(order.status?.state ?? '');
}

function ownedBy(order: Order, cr: CertificateRequest): boolean {
  return (order.metadata.ownerReferences ?? []).some(
    (r) => r.controller === true && r.uid === cr.metadata.uid,
  );
}

async function createOrder(ctx: ControllerContext, cr: CertificateRequest, name: string, spec: OrderSpec) {
  const order: Order = {
    apiVersion: ACME_API_VERSION,
    kind: AcmeKinds.Order,
    metadata: {
      name,
      namespace: cr.metadata.namespace,
      labels: { ...cr.metadata.labels },
      annotations: { ...cr.metadata.annotations },
      ownerReferences: [newControllerRef(cr, API_VERSION, Kinds.CertificateRequest)],
    },
    spec,
  };
  try {
    await ctx.orderClient.create(cr.metadata.namespace, order);
  } catch (err) {
    // Created by an earlier sync whose watch event has not arrived yet: wait for it.
    if (!isAlreadyExists(err)) throw err;
  }
}

async function sign(ctx: ControllerContext, draft: StatusDraft, handle: IssuerHandle): Promise<SignOutcome> {
  const cr = draft.cr;
  const spec = orderSpecFor(cr, handle);
  if (!('request' in spec)) return spec;
  const name = orderName(cr.metadata.name!, spec);
  const namespace = cr.metadata.namespace!;
  const order = ctx.orders.getStore().get(keyFor(namespace, name));
  if (!order) {
    await createOrder(ctx, cr, name, spec);
    return {
      pending: {
        reason: 'OrderCreated',
        message: `Created Order resource ${namespace}/${name}`,
        wakeOnEvent: true,
      },
    };
  }
  if (!ownedBy(order, cr)) {
    throw new Error(`referenced order ${namespace}/${name} is not owned by this CertificateRequest`);
  }
  const state = order.status?.state ?? '';
  if (isOrderFailed(order)) {
    return {
      failed: {
        reason: 'OrderFailed',
        message: `Failed to wait for order resource "${name}" to become ready: order is in "${state}" state: ${order.status?.reason ?? ''}`,
      },
    };
  }
  if (state !== 'valid') {
    return {
      pending: {
        reason: 'OrderPending',
        message: `Waiting on certificate issuance from order ${namespace}/${name}: "${state}"`,
        wakeOnEvent: true,
      },
    };
  }
  if (!order.status?.certificate) {
    return {
      pending: {
        reason: 'OrderPending',
        message: `Waiting for order-controller to add certificate data to Order ${namespace}/${name}`,
        wakeOnEvent: true,
      },
    };
  }
  const chainPem = Buffer.from(order.status.certificate, 'base64').toString('utf8');
  // A certificate that does not parse, or is not for the request's key, can only come from a broken Order:
  // it is deleted so that the next sync orders again.
  let usable = false;
  try {
    const csr = valueOf(requestCsr(cr));
    // Through the signer's cache: parsed here, it is not parsed again when the outcome is recorded.
    usable = certificateHasPublicKey(valueOf(parsedCertificatePem(chainPem)), csr.publicKeyDigest);
  } catch {
    usable = false;
  }
  if (!usable) {
    try {
      await ctx.orderClient.delete(namespace, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return {
      pending: {
        reason: 'OrderPending',
        message: `Deleted Order ${namespace}/${name}: its certificate is unreadable or not for the request's key`,
        wakeOnEvent: true,
      },
    };
  }
  // As cert-manager: the chain from the Order (leaf first) is the certificate; ACME says nothing of a CA.
  return { issued: { certPem: chainPem, caPem: '' } };
}

/** An Order event brings back the request that owns it (the Order's controller ownerReference). */
function watchOrders(ctx: ControllerContext, enqueue: (cr: CertificateRequest) => void): void {
  const wake = (order: Order) => {
    const owner = (order.metadata.ownerReferences ?? []).find(
      (r) => r.controller === true && r.kind === Kinds.CertificateRequest,
    );
    if (!owner) return;
    const cr = ctx.certificateRequests.getStore().get(keyFor(order.metadata.namespace, owner.name));
    if (cr && cr.metadata.uid === owner.uid) enqueue(cr);
  };
  ctx.orders.addEventHandler({
    onAdd: wake,
    onUpdate: (_old, order) => wake(order),
    onDelete: (order) => {
      if ('metadata' in order) wake(order);
      else if (order.obj) wake(order.obj);
    },
  });
}

export function acmeSigner(ctx: ControllerContext): Signer {
  return { type: 'acme', sign: (draft, handle) => sign(ctx, draft, handle), watch: watchOrders };
}
