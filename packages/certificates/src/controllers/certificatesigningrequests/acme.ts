import { formatGoDuration, isAlreadyExists, isNotFound, newControllerRef } from '@certkit/apimachinery';
import { keyFor, type SharedInformer } from '@certkit/runtime';
import { ACME_API_VERSION, AcmeKinds } from '../../api/acme-constants.ts';
import { GROUP } from '../../api/constants.ts';
import type { Order, OrderSpec } from '../../api/types.ts';
import { orderName } from '../../acme/names.ts';
import { isOrderFailed, orderSpecOf, requestParsingError } from '../certificaterequests/acme.ts';
import type { SignOutcome } from '../certificaterequests/signer.ts';
import type { ControllerContext } from '../context.ts';
import { resourceNamespace, type IssuerHandle } from '../issuers/generic.ts';
import { certificateHasPublicKey, csrFacts, parsedCertificatePem, valueOf } from '../parsed.ts';
import type { CsrCertificateSigningRequest, CsrSigner } from './controller.ts';

/**
 * The ACME signer of CSRs (cert-manager's certificatesigningrequests/acme): an approved CSR on an ACME issuer
 * gets an Order, in the issuer's namespace (a ClusterIssuer's: the cluster resource namespace), named from a
 * hash of its spec and owned by the CSR, and waits for the Orders controller to bring it to `valid` with a
 * certificate, which must be for the CSR's key; a failed Order fails the CSR. The Order's events bring the CSR
 * back, so the wait polls nothing. The Orders and Challenges controllers are the CertificateRequest ones.
 */

const CSR_API_VERSION = 'certificates.k8s.io/v1';
const CSR_KIND = 'CertificateSigningRequest';

function orderSpecForCsr(
  csr: CsrCertificateSigningRequest,
  handle: IssuerHandle,
  durationMs: number,
): OrderSpec | SignOutcome {
  let facts;
  try {
    facts = csrFacts(csr.spec.request);
  } catch (err) {
    return requestParsingError(err);
  }
  const { name } = handle.issuer.metadata ?? {};
  return orderSpecOf(
    csr.spec.request,
    facts,
    { name: name ?? '', kind: handle.kind, group: GROUP },
    formatGoDuration(BigInt(durationMs) * 1_000_000n),
    handle,
  );
}

const ownedBy = (order: Order, csr: CsrCertificateSigningRequest) =>
  (order.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === csr.metadata?.uid);

async function sign(
  ctx: ControllerContext,
  csr: CsrCertificateSigningRequest,
  handle: IssuerHandle,
  durationMs: number,
): Promise<SignOutcome> {
  const spec = orderSpecForCsr(csr, handle, durationMs);
  if (!('request' in spec)) return spec;
  const namespace = resourceNamespace(ctx, handle);
  const name = orderName(csr.metadata?.name ?? '', spec);
  const order = ctx.orders.getStore().get(keyFor(namespace, name));
  const pending = (reason: string, message: string): SignOutcome => ({
    pending: { reason, message, wakeOnEvent: true },
  });
  if (!order) {
    try {
      await ctx.orderClient.create(namespace, {
        apiVersion: ACME_API_VERSION,
        kind: AcmeKinds.Order,
        metadata: {
          name,
          namespace,
          ownerReferences: [
            newControllerRef(
              { metadata: { name: csr.metadata?.name, uid: csr.metadata?.uid } },
              CSR_API_VERSION,
              CSR_KIND,
            ),
          ],
        },
        spec,
      } as Order);
    } catch (err) {
      // Created by an earlier sync whose watch event has not arrived yet: wait for it.
      if (!isAlreadyExists(err)) throw err;
    }
    return pending('OrderCreated', `Created Order resource ${namespace}/${name}`);
  }
  if (!ownedBy(order, csr)) {
    throw new Error(`referenced order ${namespace}/${name} is not owned by this CertificateSigningRequest`);
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
  if (state !== 'valid' || !order.status?.certificate)
    return pending(
      'OrderPending',
      `Waiting on certificate issuance from order ${namespace}/${name}: "${state}"`,
    );
  const chainPem = Buffer.from(order.status.certificate, 'base64').toString('utf8');
  let usable = false;
  try {
    usable = certificateHasPublicKey(
      valueOf(parsedCertificatePem(chainPem)),
      csrFacts(csr.spec.request).publicKeyDigest,
    );
  } catch {
    usable = false;
  }
  if (!usable) {
    // Only a broken Order has such a certificate: deleted, so that the next sync orders again.
    try {
      await ctx.orderClient.delete(namespace, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return pending(
      'OrderPending',
      `Deleted Order ${namespace}/${name}: its certificate is unreadable or not for the request's key`,
    );
  }
  return { issued: { certPem: chainPem, caPem: '' } };
}

export function acmeCsrSigner(
  ctx: ControllerContext,
  csrs: SharedInformer<CsrCertificateSigningRequest>,
): CsrSigner {
  return {
    type: 'acme',
    issuedMessage: 'Certificate fetched from issuer successfully',
    sign: (csr, handle, durationMs) => sign(ctx, csr, handle, durationMs),
    // An Order event brings back the CSR that owns it.
    watch(enqueue) {
      const wake = (order: Order) => {
        const owner = (order.metadata.ownerReferences ?? []).find(
          (r) => r.controller === true && r.kind === CSR_KIND && r.apiVersion === CSR_API_VERSION,
        );
        if (!owner) return;
        const csr = csrs.getStore().get(owner.name);
        if (csr && csr.metadata?.uid === owner.uid) enqueue(csr);
      };
      ctx.orders.addEventHandler({
        onAdd: wake,
        onUpdate: (_old, order) => wake(order),
        onDelete: (order) => {
          if ('metadata' in order) wake(order);
          else if (order.obj) wake(order.obj);
        },
      });
    },
  };
}
