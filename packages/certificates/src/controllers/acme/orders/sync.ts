import { isIP } from 'node:net';
import {
  formatTime,
  isAlreadyExists,
  isNotFound,
  parseGoDuration,
  toMilliseconds,
} from '@certkit/apimachinery';
import { keyFor, type Result } from '@certkit/runtime';
import { ACME_FAILURE_STATES, ACME_FINAL_STATES } from '../../../api/acme-constants.ts';
import type { ACMEAuthorization, ACMEState, Challenge, Order, OrderStatus } from '../../../api/types.ts';
import type { AcmeClient, AcmeOrder } from '../../../acme/client/index.ts';
import { decodePemBlock } from '../../../pki/pem.ts';
import type { ControllerContext } from '../../context.ts';
import { CHALLENGE_ORDER_INDEX } from '../../create-context.ts';
import { classifyAcmeError } from '../errors.ts';
import type { AcmeIssuer } from '../issuer.ts';
import { requiredChallengeObjects } from './challenges.ts';

/**
 * One sync of an Order (cert-manager's pkg/controller/acmeorders/sync.go): each call takes the first step
 * that applies — create the ACME order, read it, read its authorizations, fetch the certificate of a valid
 * order, make the Challenges, finalize a ready order, or copy the server's state once the Challenges are
 * done — and returns the status to write. Challenge events bring the Order back, so nothing here polls.
 */

/** An ACME server that leaves an order `pending` after its authorizations are final (cert-manager #2868). */
const PENDING_AFTER_FINAL_MS = 5_000;

export const isFailureState = (state: string | undefined) =>
  (ACME_FAILURE_STATES as readonly string[]).includes(state ?? '');
export const isFinalState = (state: string | undefined) =>
  (ACME_FINAL_STATES as readonly string[]).includes(state ?? '');

export interface OrderSyncOutcome {
  status: OrderStatus;
  result?: Result;
  events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
}

/** The Challenges whose controller ownerReference is this Order (by name and, against a recreated Order, UID). */
export function ownedChallenges(ctx: ControllerContext, order: Order): Challenge[] {
  return ctx.challenges
    .getStore()
    .byIndex(CHALLENGE_ORDER_INDEX, keyFor(order.metadata.namespace, order.metadata.name!))
    .filter((ch) =>
      (ch.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === order.metadata.uid),
    );
}

/**
 * An ACME status as an Order/Challenge state. RFC 8555's `deactivated` and `revoked` (authorizations only)
 * are not states the CRDs admit; for the controllers both mean the name is not authorized: `invalid`.
 */
export function fromAcmeState(status: string): ACMEState {
  return status === 'deactivated' || status === 'revoked' ? 'invalid' : (status as ACMEState);
}

function csrDer(order: Order): Buffer {
  const raw = Buffer.from(order.spec.request, 'base64');
  // PEM in practice; DER is accepted too, as upstream's finalizer falls back to it.
  try {
    return decodePemBlock(raw, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']).der;
  } catch {
    return raw;
  }
}

function identifiers(order: Order): { type: 'dns' | 'ip'; value: string }[] {
  const dns = new Set(order.spec.dnsNames ?? []);
  const ips = new Set(order.spec.ipAddresses ?? []);
  const cn = order.spec.commonName;
  if (cn) {
    if (isIP(cn)) ips.add(cn);
    else dns.add(cn);
  }
  return [
    ...[...dns].map((value) => ({ type: 'dns' as const, value })),
    ...[...ips].map((value) => ({ type: 'ip' as const, value })),
  ];
}

function applyAcmeOrder(status: OrderStatus, acme: AcmeOrder): void {
  status.url = acme.url;
  status.finalizeURL = acme.finalize;
  status.state = fromAcmeState(acme.status);
  if (!status.authorizations?.length) status.authorizations = acme.authorizations.map((url) => ({ url }));
  if (acme.error) status.reason = acme.error.detail ?? acme.error.type ?? '';
}

export class OrderSync {
  readonly #ctx: ControllerContext;
  readonly #order: Order;
  readonly #issuer: AcmeIssuer;
  readonly #client: AcmeClient;
  readonly #status: OrderStatus;
  readonly #events: OrderSyncOutcome['events'] = [];

  constructor(ctx: ControllerContext, order: Order, issuer: AcmeIssuer) {
    this.#ctx = ctx;
    this.#order = order;
    this.#issuer = issuer;
    this.#client = issuer.client;
    this.#status = structuredClone(order.status ?? {});
  }

  async run(): Promise<OrderSyncOutcome> {
    let result: Result | undefined;
    try {
      result = await this.#step();
    } catch (err) {
      const failure = classifyAcmeError(err, this.#ctx.now());
      if (!failure.final) {
        if (failure.afterMs === undefined) throw err;
        result = { requeueAfter: failure.afterMs };
      } else {
        this.#fail('errored', `${this.#stage}: ${failure.problem.message}`);
      }
    }
    return { status: this.#status, result, events: this.#events };
  }

  #stage = 'Failed to sync Order';

  #fail(state: ACMEState, reason: string): void {
    this.#status.state = state;
    this.#status.reason = reason;
    this.#status.failureTime ??= formatTime(this.#ctx.now());
  }

  async #step(): Promise<Result | undefined> {
    const status = this.#status;
    if (isFailureState(status.state)) return undefined;

    if (!status.url) {
      this.#stage = 'Failed to create Order';
      const acme = await this.#client.newOrder({
        identifiers: identifiers(this.#order),
        ...(this.#order.spec.duration ? { notAfter: this.#notAfter(this.#order.spec.duration) } : {}),
        ...(this.#order.spec.profile ? { profile: this.#order.spec.profile } : {}),
      });
      applyAcmeOrder(status, acme);
      // As upstream's createOrder, the authorizations are read in the same sync, so the Order gets one status
      // write for both instead of two (each with its watch event and the reconciles it wakes). A failure
      // here must not lose the order's URL: the status is written anyway and the next sync reads them again,
      // through the step below, which reports the error.
      try {
        status.authorizations = await Promise.all(
          (status.authorizations ?? []).map((a) => this.#authorization(a)),
        );
      } catch {
        return { requeue: true };
      }
      return undefined;
    }
    if (!status.finalizeURL) {
      this.#stage = 'Failed to fetch Order';
      applyAcmeOrder(status, await this.#client.getOrder(status.url));
      return undefined;
    }
    if ((status.authorizations ?? []).some((a) => !a.identifier)) {
      this.#stage = 'Failed to fetch authorization';
      status.authorizations = await Promise.all(
        (status.authorizations ?? []).map((a) => this.#authorization(a)),
      );
      return undefined;
    }
    if (status.state === 'valid') {
      if (!status.certificate) {
        this.#stage = 'Failed to fetch certificate';
        const acme = await this.#client.getOrder(status.url);
        await this.#storeCertificate(acme);
        return undefined;
      }
      // Done: the Challenges have nothing left to do (their finalizers clean up what they presented).
      for (const ch of ownedChallenges(this.#ctx, this.#order)) await this.#deleteChallenge(ch);
      return undefined;
    }

    await this.#reconcileChallenges();

    if (status.state === 'ready') {
      await this.#finalize();
      return undefined;
    }

    const challenges = ownedChallenges(this.#ctx, this.#order);
    const anyFailed = challenges.some((ch) => isFailureState(ch.status?.state));
    const required = (status.authorizations ?? []).filter((a) => a.initialState !== 'valid').length;
    const allFinal =
      challenges.length >= required && challenges.every((ch) => isFinalState(ch.status?.state));
    if (!anyFailed && !allFinal) return undefined;

    this.#stage = 'Failed to fetch Order';
    const acme = await this.#client.getOrder(status.url);
    if (anyFailed) {
      status.state = fromAcmeState(acme.status);
      if (!isFailureState(status.state)) {
        // The server has not yet failed the order for its failed authorization: ask again shortly, since no
        // Challenge event will come.
        return { requeueAfter: PENDING_AFTER_FINAL_MS };
      }
      const failed = challenges.find((ch) => isFailureState(ch.status?.state));
      this.#fail(status.state!, acme.error?.detail ?? failed?.status?.reason ?? '');
      return undefined;
    }
    if (acme.status === 'pending') {
      status.state = 'pending';
      return { requeueAfter: PENDING_AFTER_FINAL_MS };
    }
    status.state = fromAcmeState(acme.status);
    if (status.state === 'ready') await this.#finalize();
    return undefined;
  }

  /** newOrder's notAfter for `enableDurationFeature`: now plus the request's (admitted) Go duration. */
  #notAfter(duration: string): Date {
    return new Date(this.#ctx.now().getTime() + toMilliseconds(parseGoDuration(duration)));
  }

  async #authorization(authz: ACMEAuthorization): Promise<ACMEAuthorization> {
    if (authz.identifier) return authz;
    const acme = await this.#client.getAuthorization(authz.url);
    return {
      url: authz.url,
      identifier: acme.identifier.value,
      wildcard: acme.wildcard ?? false,
      initialState: fromAcmeState(acme.status),
      challenges: acme.challenges.map((c) => ({ url: c.url, token: c.token, type: c.type })),
    };
  }

  /** Creates the missing Challenges and deletes owned ones no authorization needs any more. */
  async #reconcileChallenges(): Promise<void> {
    const solvers = this.#issuer.handle.issuer.spec?.acme?.solvers ?? [];
    const { challenges, problems } = requiredChallengeObjects(
      { ...this.#order, status: this.#status },
      solvers,
      this.#client.accountKey.thumbprint,
    );
    if (problems.length) {
      this.#events.push({
        type: 'Warning',
        reason: 'Solver',
        message: `Failed to determine a valid solver configuration for the set of domains on the Order: ${problems.join('; ')}`,
      });
      return;
    }
    const wanted = new Set(challenges.map((ch) => ch.metadata.name));
    const store = this.#ctx.challenges.getStore();
    for (const ch of challenges) {
      if (store.get(keyFor(ch.metadata.namespace, ch.metadata.name!))) continue;
      try {
        await this.#ctx.challengeClient.create(ch.metadata.namespace, ch);
        this.#events.push({
          type: 'Normal',
          reason: 'Created',
          message: `Created Challenge resource "${ch.metadata.name}" for domain "${ch.spec.dnsName}"`,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
    for (const ch of ownedChallenges(this.#ctx, this.#order)) {
      if (!wanted.has(ch.metadata.name)) await this.#deleteChallenge(ch);
    }
  }

  async #deleteChallenge(ch: Challenge): Promise<void> {
    if (ch.metadata.deletionTimestamp) return;
    try {
      await this.#ctx.challengeClient.delete(ch.metadata.namespace, ch.metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async #finalize(): Promise<void> {
    this.#stage = 'Failed to finalize Order';
    const status = this.#status;
    let acme: AcmeOrder;
    try {
      acme = await this.#client.finalizeOrder(status.finalizeURL!, csrDer(this.#order), status.url);
    } catch (err) {
      // 403: finalized already, with the status write lost; the server's order says where it stands.
      if ((err as { status?: number }).status !== 403) throw err;
      acme = await this.#client.getOrder(status.url!);
    }
    if (acme.status === 'processing') acme = await this.#client.waitForOrder(status.url!);
    status.state = fromAcmeState(acme.status);
    if (acme.status === 'valid') await this.#storeCertificate(acme);
    else if (isFailureState(status.state))
      this.#fail(status.state!, acme.error?.detail ?? 'finalization failed');
  }

  async #storeCertificate(acme: AcmeOrder): Promise<void> {
    if (!acme.certificate) return;
    this.#stage = 'Failed to fetch certificate';
    const preferred = this.#issuer.handle.issuer.spec?.acme?.preferredChain;
    const pem = await this.#client.certificateChain(acme.certificate, preferred || undefined);
    this.#status.certificate = Buffer.from(pem).toString('base64');
    this.#status.state = 'valid';
    this.#events.push({ type: 'Normal', reason: 'Complete', message: 'Order completed successfully' });
  }
}
