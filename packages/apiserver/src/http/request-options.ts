import {
  appendErrors,
  type FieldError,
  goStringSlice,
  goUnicodeVerb,
  isGoPrintable,
  newBadRequest,
  newInvalid,
  queryBool,
  queryInt64,
} from '@certkit/apimachinery';
import type { DeleteOptions } from '../registry/generic/types.ts';
import { deleteOptionsTypeError } from '../decode/go-decode.ts';
import { parseObjectBody } from './protobuf.ts';

/**
 * The options of the writing verbs (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions), read from the
 * query (or a DeleteOptions body) and validated as kube-apiserver's handlers do with
 * apimachinery/pkg/apis/meta/v1/validation: every problem of one request in a single 422 Invalid on kind
 * `<Verb>Options.meta.k8s.io`, with a cause per field.
 */

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteOptions {
  dryRun: boolean;
  /** '' when the client sent none (the manager then comes from the User-Agent). */
  fieldManager: string;
  fieldValidation: FieldValidation;
}

export interface PatchOptions extends WriteOptions {
  force: boolean;
}

/** validation.FieldManagerMaxLength, in bytes. */
const FIELD_MANAGER_MAX_BYTES = 128;

function validateFieldManager(manager: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(manager, 'utf8') > FIELD_MANAGER_MAX_BYTES) {
    // field.TooLong never prints the value.
    errs.push({
      type: 'FieldValueTooLong',
      field: 'fieldManager',
      detail: `may not be more than ${FIELD_MANAGER_MAX_BYTES} bytes`,
    });
  }
  let position = 0; // Go ranges over a string by bytes: the position is a UTF-8 offset.
  for (const char of manager) {
    const codePoint = char.codePointAt(0)!;
    if (!isGoPrintable(codePoint)) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'fieldManager',
        value: manager,
        detail: `invalid character ${goUnicodeVerb(codePoint)} (at position ${position})`,
      });
    }
    position += Buffer.byteLength(char, 'utf8');
  }
  return errs;
}

/** ValidateDryRun: every value must be "All"; the whole list is shown, as Go's %#v shows a []string. */
function validateDryRun(values: readonly string[]): FieldError[] {
  if (values.every((v) => v === 'All')) return [];
  return [
    {
      type: 'FieldValueNotSupported',
      field: 'dryRun',
      value: goStringSlice(values),
      detail: 'supported values: "All"',
    },
  ];
}

const FIELD_VALIDATION_VALUES = ['', 'Ignore', 'Strict', 'Warn'];

function validateFieldValidation(value: string): FieldError[] {
  if (FIELD_VALIDATION_VALUES.includes(value)) return [];
  return [
    {
      type: 'FieldValueNotSupported',
      field: 'fieldValidation',
      value,
      detail: `supported values: ${FIELD_VALIDATION_VALUES.map((v) => JSON.stringify(v)).join(', ')}`,
    },
  ];
}

function throwIfInvalid(kind: string, errs: FieldError[]): void {
  if (errs.length > 0) throw newInvalid('meta.k8s.io', kind, '', errs);
}

function readWriteOptions(query: URLSearchParams, errs: FieldError[]): WriteOptions {
  const fieldManager = query.get('fieldManager') ?? '';
  const dryRun = query.getAll('dryRun');
  const fieldValidation = query.get('fieldValidation') ?? '';
  errs.push(
    ...validateFieldManager(fieldManager),
    ...validateDryRun(dryRun),
    ...validateFieldValidation(fieldValidation),
  );
  return {
    dryRun: dryRun.length > 0,
    fieldManager,
    // An empty directive is the default, Warn (handlers' fieldValidation()).
    fieldValidation: (fieldValidation || 'Warn') as FieldValidation,
  };
}

/** CreateOptions of a POST (ValidateCreateOptions). */
export function createOptions(query: URLSearchParams): WriteOptions {
  const errs: FieldError[] = [];
  const options = readWriteOptions(query, errs);
  throwIfInvalid('CreateOptions', errs);
  return options;
}

/** UpdateOptions of a PUT (ValidateUpdateOptions). */
export function updateOptions(query: URLSearchParams): WriteOptions {
  const errs: FieldError[] = [];
  const options = readWriteOptions(query, errs);
  throwIfInvalid('UpdateOptions', errs);
  return options;
}

/**
 * PatchOptions (ValidatePatchOptions): `force` belongs to apply alone, and apply needs a fieldManager, as
 * controllers must name themselves there.
 */
export function patchOptions(query: URLSearchParams, isApply: boolean): PatchOptions {
  const errs: FieldError[] = [];
  if (!isApply && query.has('force')) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'force',
      detail: 'may not be specified for non-apply patch',
    });
  }
  if (isApply && (query.get('fieldManager') ?? '') === '') {
    errs.push({ type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' });
  }
  const options = readWriteOptions(query, errs);
  throwIfInvalid('PatchOptions', errs);
  return { ...options, force: queryBool(query, 'force') ?? false };
}

/** DeleteOptions as decoded, before validation: each field undefined when absent. */
interface DecodedDeleteOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

/**
 * The fields certkit acts on. A wrongly typed body is refused first, in Go's decoder's words; kube-apiserver
 * passes that error on unwrapped (a 500), but it is the client's mistake, so here it is a 400. Null is the
 * same as absent, as for Go.
 */
function decodeDeleteOptionsBody(body: unknown): DecodedDeleteOptions {
  const wrongType = deleteOptionsTypeError(body);
  if (wrongType) throw newBadRequest(wrongType);
  const fields = (body ?? {}) as {
    propagationPolicy?: string | null;
    orphanDependents?: boolean | null;
    preconditions?: { uid?: string | null; resourceVersion?: string | null } | null;
    dryRun?: string[] | null;
  };
  const decoded: DecodedDeleteOptions = {};
  if (fields.propagationPolicy != null) decoded.propagationPolicy = fields.propagationPolicy;
  if (fields.orphanDependents != null) decoded.orphanDependents = fields.orphanDependents;
  if (fields.dryRun != null) decoded.dryRun = fields.dryRun;
  if (fields.preconditions != null) {
    const { uid, resourceVersion } = fields.preconditions;
    decoded.preconditions = {};
    if (uid != null) decoded.preconditions.uid = uid;
    if (resourceVersion != null) decoded.preconditions.resourceVersion = resourceVersion;
  }
  return decoded;
}

/** The query form (preconditions have none: they come in a body only). */
function decodeDeleteOptionsQuery(query: URLSearchParams): DecodedDeleteOptions {
  const decoded: DecodedDeleteOptions = {};
  // Present means set, even when empty: `propagationPolicy=` is the unsupported value "".
  const policy = query.get('propagationPolicy');
  if (policy !== null) decoded.propagationPolicy = policy;
  decoded.orphanDependents = queryBool(query, 'orphanDependents');
  // certkit deletes at once whatever the grace period, but a malformed one is still refused (a 400 from
  // the query decoding, as kube-apiserver's), not read as absent: the delete must not go ahead.
  queryInt64(query, 'gracePeriodSeconds');
  const dryRun = query.getAll('dryRun');
  if (dryRun.length > 0) decoded.dryRun = dryRun;
  return decoded;
}

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'];

/**
 * DeleteOptions of a DELETE: from the body when there is one, and then the query is not read at all (as
 * kube-apiserver's delete handler does), else from the query; then ValidateDeleteOptions.
 */
export function deleteOptions(
  query: URLSearchParams,
  body: Buffer,
  contentType: string | undefined,
): DeleteOptions {
  const decoded =
    body.length > 0
      ? decodeDeleteOptionsBody(parseObjectBody(body, contentType))
      : decodeDeleteOptionsQuery(query);
  const errs: FieldError[] = [];
  const policy = decoded.propagationPolicy;
  if (decoded.orphanDependents !== undefined && policy !== undefined) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'propagationPolicy',
      value: policy,
      detail: 'orphanDependents and deletionPropagation cannot be both set',
    });
  }
  if (policy !== undefined && !PROPAGATION_POLICIES.includes(policy)) {
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'propagationPolicy',
      value: policy,
      detail: `supported values: ${[...PROPAGATION_POLICIES, 'nil'].map((v) => JSON.stringify(v)).join(', ')}`,
    });
  }
  appendErrors(errs, validateDryRun(decoded.dryRun ?? []));
  throwIfInvalid('DeleteOptions', errs);

  const options: DeleteOptions = {};
  if (policy !== undefined) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  if (decoded.orphanDependents !== undefined) options.orphanDependents = decoded.orphanDependents;
  if (decoded.preconditions) options.preconditions = decoded.preconditions;
  if (decoded.dryRun !== undefined && decoded.dryRun.length > 0) options.dryRun = true;
  return options;
}
