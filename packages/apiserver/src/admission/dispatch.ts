/**
 * Calling one webhook for one object: whether it applies (rules, matchPolicy, selectors), the dry-run check,
 * the review sent to it and its answer judged, with failurePolicy applied to calls that produced no answer.
 * The mutating and validating passes (mutating.ts, validating.ts) decide what to do with the answers.
 */

import type { ResourceDefinition } from '../registry/resource.ts';
import type { AdmissionAttributes } from './attributes.ts';
import { WebhookCallError, type WebhookClient, type WebhookTarget } from './client.ts';
import { callFailedError, deniedError, dryRunUnsupportedError, httpErrorText } from './errors.ts';
import { matchingVersion } from './rules.ts';
import {
  type ReviewTarget,
  type AdmissionResult,
  buildReview,
  InvalidResponseError,
  reviewVersion,
  verifyResponse,
} from './review.ts';
import { type NamespaceLookup, namespaceSelectorMatches, objectSelectorMatches } from './selectors.ts';
import { DEFAULT_TIMEOUT_SECONDS } from './configuration-defaults.ts';
import { evaluateMatchConditions } from './match-conditions.ts';
import type { ServiceReference, Webhook } from './webhook-types.ts';

/** Finds where a service's webhook listens (its EndpointSlices), or throws with the reason. */
export type ServiceResolver = (service: ServiceReference) => Promise<{ host: string; port: number }>;

export interface DispatchContext {
  client: WebhookClient;
  getNamespace: NamespaceLookup;
  resolveService?: ServiceResolver;
  log: (entry: Record<string, unknown>) => void;
}

/** The version the webhook wants the request at, or undefined when the webhook does not apply. */
export async function webhookApplies(
  hook: Webhook,
  def: ResourceDefinition,
  attrs: AdmissionAttributes,
  context: DispatchContext,
): Promise<string | undefined> {
  const subresource = attrs.request.subresource ?? '';
  const version = matchingVersion(hook, def, {
    operation: attrs.operation,
    group: def.group,
    version: attrs.request.version,
    resource: def.resource,
    subresource,
    namespace: attrs.namespace,
  });
  if (version === undefined) return undefined;
  if (!objectSelectorMatches(hook, attrs)) return undefined;
  if (!(await namespaceSelectorMatches(hook, attrs, def.resource, subresource, context.getNamespace)))
    return undefined;
  if (hook.matchConditions && hook.matchConditions.length > 0) {
    const { body } = buildReview('v1', attrs, reviewTarget(def, attrs, version), requestResource(def, attrs));
    const verdict = evaluateMatchConditions(hook.matchConditions, body.request as Record<string, unknown>);
    if (verdict === false) return undefined;
    if (typeof verdict === 'string') {
      const reason = `webhook match conditions evaluation error: ${verdict}`;
      if (hook.failurePolicy === 'Ignore') {
        context.log({
          level: 'warn',
          msg: 'failed calling webhook, failing open',
          webhook: hook.name,
          err: reason,
        });
        return undefined;
      }
      throw callFailedError(hook.name ?? '', reason);
    }
  }
  return version;
}

function reviewTarget(def: ResourceDefinition, attrs: AdmissionAttributes, version: string): ReviewTarget {
  return {
    group: def.group,
    version,
    resource: def.resource,
    subresource: attrs.request.subresource ?? '',
    kind: def.kind,
  };
}

function requestResource(def: ResourceDefinition, attrs: AdmissionAttributes) {
  return { group: def.group, version: attrs.request.version, resource: def.resource };
}

/** Why the call failed, as ErrCallingWebhook's reason; thrown inside call() only. */
class CallFailure extends Error {}

async function targetOf(hook: Webhook, context: DispatchContext): Promise<WebhookTarget> {
  const timeout = `timeout=${hook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS}s`;
  const cc = hook.clientConfig ?? {};
  if (cc.url) {
    const url = new URL(cc.url);
    url.search = timeout;
    return { url, caBundle: cc.caBundle };
  }
  const service = cc.service ?? {};
  const host = `${service.name}.${service.namespace}.svc`;
  const url = new URL(`https://${host}:${service.port ?? 443}${service.path ?? ''}`);
  url.search = timeout;
  const shown = `failed to call webhook: Post "${url.href}"`;
  if (!context.resolveService) throw new CallFailure(`${shown}: services are not served`);
  let dial: { host: string; port: number };
  try {
    dial = await context.resolveService(service);
  } catch (err) {
    throw new CallFailure(`${shown}: ${(err as Error).message}`);
  }
  return { url, dial, caBundle: cc.caBundle };
}

/**
 * Sends the review and judges the answer. A denial throws the webhook's Status; a call that failed throws
 * (failurePolicy Fail) or returns undefined (Ignore, logged).
 */
export async function callWebhook(
  hook: Webhook,
  def: ResourceDefinition,
  attrs: AdmissionAttributes,
  version: string,
  mutating: boolean,
  context: DispatchContext,
): Promise<AdmissionResult | undefined> {
  const name = hook.name ?? '';
  if (attrs.request.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun')
    throw dryRunUnsupportedError(name);
  let result: AdmissionResult;
  try {
    result = await call(hook, def, attrs, version, mutating, context);
  } catch (err) {
    if (!(err instanceof CallFailure)) throw err;
    if (hook.failurePolicy === 'Ignore') {
      context.log({
        level: 'warn',
        msg: 'failed calling webhook, failing open',
        webhook: name,
        err: err.message,
      });
      return undefined;
    }
    context.log({
      level: 'warn',
      msg: 'failed calling webhook, failing closed',
      webhook: name,
      err: err.message,
    });
    throw callFailedError(name, err.message);
  }
  if (result.warnings.length > 0) attrs.request.warn(result.warnings);
  if (!result.allowed) throw deniedError(name, result.status);
  return result;
}

async function call(
  hook: Webhook,
  def: ResourceDefinition,
  attrs: AdmissionAttributes,
  version: string,
  mutating: boolean,
  context: DispatchContext,
): Promise<AdmissionResult> {
  const reviewApiVersion = reviewVersion(hook.admissionReviewVersions);
  if (!reviewApiVersion) throw new CallFailure('webhook does not accept known AdmissionReview versions');
  const { uid, body } = buildReview(
    reviewApiVersion,
    attrs,
    reviewTarget(def, attrs, version),
    requestResource(def, attrs),
  );
  const target = await targetOf(hook, context);
  let reply;
  try {
    reply = await context.client.post(
      target,
      JSON.stringify(body),
      (hook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
    );
  } catch (err) {
    if (err instanceof WebhookCallError) throw new CallFailure(`failed to call webhook: ${err.message}`);
    throw err;
  }
  if (reply.statusCode < 200 || reply.statusCode > 299)
    throw new CallFailure(`failed to call webhook: ${httpErrorText(reply.statusCode, reply.body)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply.body);
  } catch (err) {
    throw new CallFailure(`failed to call webhook: ${(err as Error).message}`);
  }
  try {
    return verifyResponse(reviewApiVersion, uid, mutating, parsed);
  } catch (err) {
    if (err instanceof InvalidResponseError)
      throw new CallFailure(`received invalid webhook response: ${err.message}`);
    throw err;
  }
}
