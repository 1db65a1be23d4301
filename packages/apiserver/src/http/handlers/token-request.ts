/**
 * POST `/api/v1/namespaces/<ns>/serviceaccounts/<name>/token`: the TokenRequest API (authentication.k8s.io/v1),
 * which `kubectl create token` calls. The body is decoded as a TokenRequest, defaulted and validated as
 * kube-apiserver does it; the token is issued by the server's ServiceAccountTokens and nothing is stored.
 */

import {
  type FieldError,
  formatTime,
  goQuote,
  newBadRequest,
  newInvalid,
  newMethodNotAllowed,
} from '@certkit/apimachinery';
import { decodeTyped } from '../../decode/go-decode.ts';
import { loadModel } from '../../decode/kube-models.ts';
import type { ServiceAccountTokens, TokenSpec } from '../../security/serviceaccount/tokens.ts';
import { parseObjectBody } from '../protobuf.ts';
import { createOptions } from '../request-options.ts';
import { sendJson } from '../respond.ts';
import { addWarnings } from '../warning-header.ts';
import type { ServedSubresource } from '../../registry/registry.ts';
import type { VerbRequest } from './verb-request.ts';
import { readObjectBody } from './write-body.ts';

const GROUP = 'authentication.k8s.io';
const API_VERSION = `${GROUP}/v1`;
const KIND = 'TokenRequest';
/** TokenRequestSpec's default expirationSeconds (one hour). */
const DEFAULT_EXPIRATION_SECONDS = 3600;
/** ValidateTokenRequest's bounds: ten minutes, and 2^32 seconds. */
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const CANNOT_HANDLE = `${KIND} in version "v1" cannot be handled as a ${KIND}`;

/** `serviceaccounts/token` as kube-apiserver's discovery lists it: a TokenRequest of another group, create only. */
export const TOKEN_SUBRESOURCE: ServedSubresource = {
  name: 'token',
  kind: KIND,
  group: GROUP,
  version: 'v1',
  verbs: ['create'],
};

interface TokenRequestBody {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: Partial<TokenSpec> & { expirationSeconds?: number };
}

export async function handleTokenRequest(tokens: ServiceAccountTokens, verb: VerbRequest): Promise<void> {
  if (verb.req.method !== 'POST' || verb.name === undefined) throw newMethodNotAllowed();
  const name = verb.name;
  const namespace = verb.namespace!;
  const raw = await readObjectBody(verb);
  const { fieldValidation } = createOptions(verb.query);
  const body = await decodeTokenRequest(raw, verb, fieldValidation);
  const errors = validate(body, name, namespace);
  if (errors.length > 0) throw newInvalid(GROUP, KIND, body.metadata?.name ?? '', errors);
  const spec = body.spec ?? {};
  let expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  const max = tokens.config.maxExpirationSeconds;
  if (max > 0 && expirationSeconds > max) {
    // kube-apiserver shortens rather than refuses, and says so in a warning.
    addWarnings(verb.res, [
      `requested expiration of ${expirationSeconds} seconds shortened to ${max} seconds`,
    ]);
    expirationSeconds = max;
  }
  const issued = await tokens.issue(namespace, name, {
    audiences: spec.audiences ?? [],
    expirationSeconds,
    boundObjectRef: spec.boundObjectRef,
  });
  sendJson(verb.res, 201, {
    kind: KIND,
    apiVersion: API_VERSION,
    metadata: {
      name: body.metadata?.name || name,
      namespace: body.metadata?.namespace || namespace,
      creationTimestamp: formatTime(issued.issuedAt),
    },
    spec: {
      audiences: issued.audiences,
      expirationSeconds,
      boundObjectRef: spec.boundObjectRef ?? null,
    },
    status: { token: issued.token, expirationTimestamp: formatTime(issued.expiresAt) },
  });
}

/** The body read as a TokenRequest (JSON, YAML or protobuf): wrong types are a 400, unknown fields per fieldValidation. */
async function decodeTokenRequest(
  raw: Buffer,
  verb: VerbRequest,
  fieldValidation: string,
): Promise<TokenRequestBody> {
  const body = parseObjectBody(raw, verb.req.headers['content-type']);
  const { apiVersion, kind } = body;
  if ((apiVersion !== undefined && apiVersion !== API_VERSION) || (kind !== undefined && kind !== KIND)) {
    throw newBadRequest(
      `${CANNOT_HANDLE}: expected ${API_VERSION}, Kind=${KIND}, got ${String(apiVersion ?? '')}, Kind=${String(kind ?? '')}`,
    );
  }
  const { typeError, unknown } = decodeTyped(body, await loadModel('AuthenticationV1TokenRequest'));
  if (typeError !== undefined) throw newBadRequest(`${CANNOT_HANDLE}: ${typeError}`);
  const strict = unknown.map((f) => `unknown field ${goQuote(f)}`);
  if (strict.length > 0 && fieldValidation === 'Strict') {
    throw newBadRequest(`${CANNOT_HANDLE}: strict decoding error: ${strict.join(', ')}`);
  }
  if (strict.length > 0 && fieldValidation === 'Warn') {
    addWarnings(verb.res, strict);
  }
  return body as TokenRequestBody;
}

/** ValidateTokenRequest, and TokenREST's checks that the body's name and namespace, if any, are the path's. */
function validate(body: TokenRequestBody, name: string, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const meta = body.metadata ?? {};
  if (meta.name && meta.name !== name) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.name',
      value: meta.name,
      detail: 'must match the service account name if specified',
    });
  }
  if (meta.namespace && meta.namespace !== namespace) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.namespace',
      value: meta.namespace,
      detail: 'must match the service account namespace if specified',
    });
  }
  const seconds = body.spec?.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (seconds < MIN_EXPIRATION_SECONDS) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      value: seconds,
      detail: 'may not specify a duration less than 10 minutes',
    });
  }
  if (seconds > MAX_EXPIRATION_SECONDS) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      value: seconds,
      detail: 'may not specify a duration larger than 2^32 seconds',
    });
  }
  return errors;
}
