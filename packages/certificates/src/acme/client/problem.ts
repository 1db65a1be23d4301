/**
 * ACME errors as RFC 8555 §6.7 reports them: a problem document (RFC 7807) with a `type` URN, a `detail` and,
 * for requests about several identifiers, `subproblems`. Callers decide on the type and status (cert-manager
 * treats every ACME 4xx as final and retries the rest), so both are kept as fields, not only in the message.
 */

export const ACME_ERROR_PREFIX = 'urn:ietf:params:acme:error:';

/** The problem types the client or its callers act on; any other URN still comes through as `type`. */
export const AcmeErrorType = {
  accountDoesNotExist: `${ACME_ERROR_PREFIX}accountDoesNotExist`,
  alreadyReplaced: `${ACME_ERROR_PREFIX}alreadyReplaced`,
  badCSR: `${ACME_ERROR_PREFIX}badCSR`,
  badNonce: `${ACME_ERROR_PREFIX}badNonce`,
  externalAccountRequired: `${ACME_ERROR_PREFIX}externalAccountRequired`,
  malformed: `${ACME_ERROR_PREFIX}malformed`,
  orderNotReady: `${ACME_ERROR_PREFIX}orderNotReady`,
  rateLimited: `${ACME_ERROR_PREFIX}rateLimited`,
  serverInternal: `${ACME_ERROR_PREFIX}serverInternal`,
  unauthorized: `${ACME_ERROR_PREFIX}unauthorized`,
} as const;

export interface AcmeIdentifier {
  type: string;
  value: string;
}

export interface AcmeSubproblem {
  type: string;
  detail?: string;
  identifier?: AcmeIdentifier;
}

export interface AcmeProblemDocument {
  type?: string;
  detail?: string;
  status?: number;
  instance?: string;
  subproblems?: AcmeSubproblem[];
}

/** An ACME server answered with an error status; `type` and `detail` come from its problem document. */
export class AcmeProblemError extends Error {
  override readonly name = 'AcmeProblemError';
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The problem type URN; `about:blank` when the server sent no problem document (RFC 7807 §4.2). */
  readonly type: string;
  readonly detail: string;
  readonly subproblems: AcmeSubproblem[];
  /** The URL the request went to. */
  readonly url: string;
  /** When the server asked to be retried (Retry-After), if it did. */
  readonly retryAfter: Date | undefined;

  constructor(init: {
    status: number;
    url: string;
    problem: AcmeProblemDocument | undefined;
    retryAfter?: Date;
  }) {
    const type = init.problem?.type || 'about:blank';
    const detail = init.problem?.detail ?? '';
    const subproblems = Array.isArray(init.problem?.subproblems) ? init.problem.subproblems : [];
    // Go's acme.Error prints "<status> <type>: <detail>"; cert-manager copies that text into reasons.
    const sub = subproblems.map(
      (p) =>
        `; ${p.identifier ? `${p.identifier.type}:${p.identifier.value}: ` : ''}${p.type}: ${p.detail ?? ''}`,
    );
    super(`${init.status} ${type}: ${detail}${sub.join('')}`);
    this.status = init.status;
    this.type = type;
    this.detail = detail;
    this.subproblems = subproblems;
    this.url = init.url;
    this.retryAfter = init.retryAfter;
  }

  /** Whether this is the problem `type` (a full URN, e.g. `AcmeErrorType.badNonce`). */
  is(type: string): boolean {
    return this.type === type;
  }

  /** ACME 4xx answers do not change by asking again (cert-manager's `IsNonRetryableError`), 429 aside. */
  get isClientError(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 429;
  }
}

/** The request never got an HTTP answer (connection refused, TLS failure, timeout): always worth a retry later. */
export class AcmeTransportError extends Error {
  override readonly name = 'AcmeTransportError';
  readonly url: string;

  /** `detail` replaces the cause's own message (see tls-failure.ts). */
  constructor(url: string, cause: unknown, detail?: string) {
    super(
      `ACME request to ${url} failed: ${detail ?? (cause instanceof Error ? cause.message : String(cause))}`,
      {
        cause,
      },
    );
    this.url = url;
  }
}

/** The server answered, but not as RFC 8555 says it must (no Location, no nonce, a body that is not JSON). */
export class AcmeProtocolError extends Error {
  override readonly name = 'AcmeProtocolError';
}
