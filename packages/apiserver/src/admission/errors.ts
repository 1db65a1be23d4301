/**
 * The errors the chain answers with, worded as kube-apiserver's webhook errors (webhook/errors/statuserror.go,
 * util/webhook/error.go): a denial carries the webhook's Status under `admission webhook "NAME" denied the
 * request`, a failed call under Fail policy is a 500 InternalError `failed calling webhook "NAME": …`.
 */

import { newBadRequest, newInternalError, type Status, StatusError } from '@certkit/apimachinery';
import type { AdmissionResult } from './review.ts';

/** A webhook's refusal: its Status (code at least 400) with the message rewritten. */
export function deniedError(webhook: string, status: AdmissionResult['status']): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const message = typeof status?.message === 'string' ? status.message : '';
  const reason = typeof status?.reason === 'string' ? status.reason : '';
  const full: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: message
      ? `${deniedBy}: ${message}`
      : reason
        ? `${deniedBy}: ${reason}`
        : `${deniedBy} without explanation`,
    code,
  };
  if (reason) full.reason = reason as Status['reason'];
  if (status?.details && typeof status.details === 'object')
    full.details = status.details as Status['details'];
  return new StatusError(full);
}

/** ErrCallingWebhook's text. */
export function callFailureMessage(webhook: string, reason: string): string {
  return `failed calling webhook "${webhook}": ${reason}`;
}

/** A failed call under failurePolicy Fail. */
export function callFailedError(webhook: string, reason: string): StatusError {
  return newInternalError(callFailureMessage(webhook, reason));
}

/** A dry-run request reaching a webhook that may have side effects. */
export function dryRunUnsupportedError(webhook: string): StatusError {
  return newBadRequest(`admission webhook "${webhook}" does not support dry run`);
}

/**
 * What client-go says of a non-2xx answer (transformResponse): the Status's message when the body is one,
 * else a phrase by code.
 */
export function httpErrorText(statusCode: number, body: string): string {
  try {
    const status = JSON.parse(body) as { kind?: string; message?: string };
    if (status?.kind === 'Status' && status.message) return status.message;
  } catch {
    // Not JSON: described by its code below.
  }
  const trimmed = body.trim().slice(0, 1024);
  switch (statusCode) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'Unauthorized';
    case 403:
      return trimmed ? `forbidden: ${trimmed}` : 'forbidden';
    case 404:
      return 'the server could not find the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    default:
      if (statusCode >= 500)
        return `an error on the server ("${trimmed}") has prevented the request from succeeding`;
      return `the server responded with the status code ${statusCode} but did not return more information`;
  }
}
