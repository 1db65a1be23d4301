/**
 * Kubernetes `Status` errors: the shape kube-apiserver answers failures with, shared by the server (which
 * sends them) and clients (which decode them and ask `isNotFound(err)` and friends).
 */

import { GoSyntax, goQuote } from './go-format.ts';

/** The `reason` of a Status (metav1.StatusReason), which says what went wrong in a word clients switch on. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'Unknown';

/** The `reason` of a StatusCause (metav1.CauseType): what is wrong with one field. */
export type CauseType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid'
  | 'UnexpectedServerResponse'
  | 'FieldManagerConflict'
  | 'ResourceVersionTooLarge';

/** One cause of a failure, usually a field error: its reason, message and field path. */
export interface StatusCause {
  reason?: CauseType | string;
  message?: string;
  field?: string;
}

/** What a Status is about: the object's name, group and kind, the causes, and when to retry. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The metav1.Status body of every API error response. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string; resourceVersion?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason | '';
  details?: StatusDetails;
  code: number;
}

/** A failure carrying the Status the server sends (or sent) for it. */
export class StatusError extends Error {
  readonly status: Status;

  constructor(status: Status) {
    super(status.message ?? status.reason ?? `status ${status.code}`);
    this.name = 'StatusError';
    this.status = status;
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason | '' {
    return this.status.reason ?? '';
  }
}

/** A field-level validation error, as field.Error in apimachinery. */
export interface FieldError {
  type: CauseType;
  field: string;
  /** The offending value, shown in the message when given. */
  value?: unknown;
  detail?: string;
}

/**
 * A resource name qualified by group the way kube-apiserver writes it in messages: `secrets`,
 * `leases.coordination.k8s.io`.
 */
export interface QualifiedResource {
  group: string;
  resource: string;
}

function qualified(r: QualifiedResource): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}

/**
 * A Failure Status with the given code, reason and message, as every `new*` constructor here builds it; for
 * the answers that have no constructor of their own.
 */
export function newStatusError(
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
): StatusError {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  };
  if (details) status.details = details;
  return new StatusError(status);
}

/** 404 NotFound: `<resource> "<name>" not found`. */
export function newNotFound(r: QualifiedResource, name: string): StatusError {
  return newStatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, {
    name,
    group: r.group,
    kind: r.resource,
  });
}

/** 409 AlreadyExists: `<resource> "<name>" already exists`. */
export function newAlreadyExists(r: QualifiedResource, name: string): StatusError {
  return newStatusError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, {
    name,
    group: r.group,
    kind: r.resource,
  });
}

/** 409 Conflict: `Operation cannot be fulfilled on <resource> "<name>": <why>`. */
export function newConflict(r: QualifiedResource, name: string, why: string): StatusError {
  return newStatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`,
    {
      name,
      group: r.group,
      kind: r.resource,
    },
  );
}

/** The reason kube-apiserver gives in a Conflict for a stale resourceVersion. */
export const OBJECT_MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

/** The value of a field error as field.Error prints it: %q for a string, Go syntax when given as such. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (value instanceof GoSyntax) return value.text;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const fieldErrorPhrase: Record<string, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

/** Renders a field error as field.Error.Error() does: `spec.x: Invalid value: "y": detail`. */
export function formatFieldError(e: FieldError): string {
  const phrase = fieldErrorPhrase[e.type] ?? e.type;
  const parts = [`${e.field}: ${phrase}`];
  const showsValue = e.type !== 'FieldValueRequired' && e.type !== 'FieldValueForbidden' && 'value' in e;
  if (showsValue) parts.push(describeValue(e.value));
  if (e.detail) parts.push(e.detail);
  return parts.join(': ');
}

/**
 * How many field errors a 422 names. kube-apiserver names every one; a body of 3 MiB can hold 190,000 bad
 * labels, whose Status came to 118 MB (a 53 MB message and as many causes), held the server's event loop for
 * 2 s and its RSS 420 MB higher. No object a person or controller writes comes near a thousand errors.
 */
export const MAX_REPORTED_FIELD_ERRORS = 1000;

/**
 * 422 Invalid with one cause per field error, as NewInvalid. `kind` is the object's Kind. Past
 * {@link MAX_REPORTED_FIELD_ERRORS}, the rest are counted in the message, not listed.
 */
export function newInvalid(group: string, kind: string, name: string, errors: FieldError[]): StatusError {
  const reported =
    errors.length > MAX_REPORTED_FIELD_ERRORS ? errors.slice(0, MAX_REPORTED_FIELD_ERRORS) : errors;
  const list = reported.map(formatFieldError);
  if (reported.length < errors.length) list.push(`and ${errors.length - reported.length} more errors`);
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return newStatusError(
    422,
    'Invalid',
    `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${summary}`,
    {
      name,
      group,
      kind,
      causes: reported.map((e) => ({
        reason: e.type,
        message: formatFieldError(e).slice(e.field.length + 2),
        field: e.field,
      })),
    },
  );
}

/** 400 BadRequest with this message. */
export function newBadRequest(message: string): StatusError {
  return newStatusError(400, 'BadRequest', message);
}

/** 401 Unauthorized. */
export function newUnauthorized(message = 'Unauthorized'): StatusError {
  return newStatusError(401, 'Unauthorized', message);
}

/** 403 Forbidden with this message. */
export function newForbidden(message: string): StatusError {
  return newStatusError(403, 'Forbidden', message);
}

/**
 * kube-apiserver's 405: go-restful finds the path but no route for the method, and the server's
 * ServiceErrorHandler answers NewGenericServerResponse(405), whose message names neither and whose details
 * are present but empty.
 */
export function newMethodNotAllowed(): StatusError {
  return newStatusError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

/** 406 NotAcceptable with this message. */
export function newNotAcceptable(message: string): StatusError {
  return newStatusError(406, 'NotAcceptable', message);
}

/** 415 naming what the endpoint accepts instead, as kube-apiserver does. */
export function newUnsupportedMediaType(
  contentType: string,
  accepted: string[] = ['application/json', 'application/vnd.kubernetes.protobuf'],
): StatusError {
  return newStatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}; got ${JSON.stringify(contentType)}`,
  );
}

/** 413 RequestEntityTooLarge for a body over `limitBytes`. */
export function newRequestEntityTooLarge(limitBytes: number): StatusError {
  return newStatusError(413, 'RequestEntityTooLarge', `the request body is larger than ${limitBytes} bytes`);
}

/** 410 Expired: a list, watch or continue token refers to a compacted revision. */
export function newExpired(message: string): StatusError {
  return newStatusError(410, 'Expired', message);
}

/** 410 Gone with this message. */
export function newGone(message: string): StatusError {
  return newStatusError(410, 'Gone', message);
}

/** 429 TooManyRequests, with the seconds after which to retry. */
export function newTooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return newStatusError(429, 'TooManyRequests', message, { retryAfterSeconds });
}

/** 500 InternalError with this message. */
export function newInternalError(message: string): StatusError {
  return newStatusError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

/** 503 ServiceUnavailable with this message. */
export function newServiceUnavailable(message: string): StatusError {
  return newStatusError(503, 'ServiceUnavailable', message);
}

/** 504 Timeout, with the seconds after which to retry. */
export function newTimeout(message: string, retryAfterSeconds: number): StatusError {
  return newStatusError(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds });
}

/** The Status kube-apiserver returns for a successful delete of an object that is not returned. */
export function successStatus(details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) status.details = details;
  return status;
}

/** Recognises a Status body decoded from a response. */
export function isStatus(value: unknown): value is Status {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

function reasonOf(err: unknown): string | undefined {
  return err instanceof StatusError ? err.reason : undefined;
}

function codeOf(err: unknown): number | undefined {
  return err instanceof StatusError ? err.code : undefined;
}

/** Whether an error is a StatusError with reason NotFound. */
export const isNotFound = (err: unknown): boolean => reasonOf(err) === 'NotFound';
/** Whether an error is a StatusError with reason AlreadyExists. */
export const isAlreadyExists = (err: unknown): boolean => reasonOf(err) === 'AlreadyExists';
/** Whether an error is a 409 Conflict (a stale resourceVersion, a failed precondition), not AlreadyExists. */
export const isConflict = (err: unknown): boolean =>
  reasonOf(err) === 'Conflict' || (codeOf(err) === 409 && reasonOf(err) !== 'AlreadyExists');
/** Whether an error is a StatusError with reason Invalid (422, with field causes). */
export const isInvalid = (err: unknown): boolean => reasonOf(err) === 'Invalid';
/** Whether an error is a StatusError with reason BadRequest. */
export const isBadRequest = (err: unknown): boolean => reasonOf(err) === 'BadRequest';
/** Whether an error is a 429 TooManyRequests. */
export const isTooManyRequests = (err: unknown): boolean =>
  reasonOf(err) === 'TooManyRequests' || codeOf(err) === 429;
/** True for 410 with reason Expired or Gone, as client-go's isExpiredError. */
export const isGone = (err: unknown): boolean =>
  reasonOf(err) === 'Expired' || reasonOf(err) === 'Gone' || codeOf(err) === 410;
/**
 * Whether an error is a StatusError with reason Expired (a resourceVersion too old to list or watch from).
 */
export const isResourceExpired = (err: unknown): boolean => reasonOf(err) === 'Expired';
/** Whether an error is a StatusError with reason Unauthorized. */
export const isUnauthorized = (err: unknown): boolean => reasonOf(err) === 'Unauthorized';
/** Whether an error is a StatusError with reason Forbidden. */
export const isForbidden = (err: unknown): boolean => reasonOf(err) === 'Forbidden';
/** Whether an error is a StatusError with reason MethodNotAllowed. */
export const isMethodNotAllowed = (err: unknown): boolean => reasonOf(err) === 'MethodNotAllowed';
/** Whether an error is a StatusError with reason NotAcceptable. */
export const isNotAcceptable = (err: unknown): boolean => reasonOf(err) === 'NotAcceptable';
/** Whether an error is a StatusError with reason ServiceUnavailable. */
export const isServiceUnavailable = (err: unknown): boolean => reasonOf(err) === 'ServiceUnavailable';
/** Whether an error is a StatusError with reason Timeout. */
export const isTimeout = (err: unknown): boolean => reasonOf(err) === 'Timeout';
/** Whether an error is a StatusError with reason InternalError. */
export const isInternalError = (err: unknown): boolean => reasonOf(err) === 'InternalError';
