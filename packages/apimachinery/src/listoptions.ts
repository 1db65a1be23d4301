/**
 * List, watch and get query parameters, decoded and validated the way kube-apiserver does it: decoding
 * problems (selectors, integers) are 400 BadRequest; the rules of
 * apimachinery/pkg/apis/meta/internalversion/validation are 422 Invalid on kind ListOptions.meta.k8s.io.
 */
import { forbidden, notSupported } from './field-errors.ts';
import { everythingFields, type FieldSelector, parseFieldSelector } from './fields.ts';
import { everythingLabels, type LabelSelector, parseLabelSelector } from './labels.ts';
import { goQuote } from './go-format.ts';
import { queryBool } from './query-bool.ts';
import { type FieldError, formatFieldError, newBadRequest, newInvalid, newStatusError } from './status.ts';

/** The `resourceVersionMatch` query parameter: '' (unset), `NotOlderThan` or `Exact`. */
export type ResourceVersionMatch = '' | 'NotOlderThan' | 'Exact';

/** The verb a request's list options are validated for: the rules differ for list, watch and get. */
export type ListVerb = 'list' | 'watch' | 'get';

/** List, watch and get query parameters as `parseListOptions` decodes and validates them. */
export interface ListOptions {
  /** '' (most recent), '0' (any) or a decimal revision; validated numeric, kept as sent. */
  resourceVersion: string;
  resourceVersionMatch: ResourceVersionMatch;
  /** 0 means no limit (a negative limit is read as none, as kube-apiserver pages only for limit > 0). */
  limit: number;
  continue: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  allowWatchBookmarks: boolean;
  /** undefined when the parameter was absent; the caller applies any WatchList defaulting. */
  sendInitialEvents: boolean | undefined;
  /**
   * undefined when absent; 0 is passed through (kube-apiserver reads it as "use the default"), and so is a
   * negative value (its watch then ends at once).
   */
  timeoutSeconds: number | undefined;
}

/**
 * Whether the request asks for a watch (`?watch=true`, `?watch=True`, `?watch=1`, `?watch`), as the handler
 * and the request metrics decide.
 */
export function isWatchRequested(query: URLSearchParams): boolean {
  return queryBool(query, 'watch') ?? false;
}

/**
 * An int64 parameter, read as strconv.ParseInt(raw, 10, 64) reads it (the query decoding of kube-apiserver),
 * with its error as the 400's message. Values beyond what a JS number holds exactly are clamped: for a limit
 * or a timeout they mean "unbounded" either way.
 */
export function queryInt64(query: URLSearchParams, name: string): number | undefined {
  if (!query.has(name)) return undefined;
  const raw = query.get(name) ?? '';
  const quoted = goQuote(raw);
  if (!/^[+-]?[0-9]+$/.test(raw)) throw newBadRequest(`strconv.ParseInt: parsing ${quoted}: invalid syntax`);
  const value = BigInt(raw);
  if (value >= 2n ** 63n || value < -(2n ** 63n)) {
    throw newBadRequest(`strconv.ParseInt: parsing ${quoted}: value out of range`);
  }
  return Math.max(Math.min(Number(value), Number.MAX_SAFE_INTEGER), Number.MIN_SAFE_INTEGER);
}

/** validation.ValidateListOptions for a list. */
function validateList(
  resourceVersion: string,
  match: string,
  cont: string,
  sendInitialEvents?: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  if (match !== '') {
    if (resourceVersion === '') {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    }
    if (cont !== '') {
      errs.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && resourceVersion === '0') {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    }
  }
  if (sendInitialEvents !== undefined) {
    errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  return errs;
}

/** validation.validateWatchOptions (with the WatchList feature on). */
function validateWatch(match: string, cont: string, sendInitialEvents?: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(
      forbidden(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  }
  if (match !== '') {
    if (sendInitialEvents === undefined) {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (cont !== '') {
      errs.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
  }
  return errs;
}

/**
 * The storage layer's ParseResourceVersion: '' and '0' are special, anything else must be a uint64. Returns
 * its error, a field.Invalid on `resourceVersion` worded as strconv.ParseUint words it, or undefined.
 */
function resourceVersionProblem(resourceVersion: string): string | undefined {
  if (resourceVersion === '' || resourceVersion === '0') return undefined;
  const quoted = goQuote(resourceVersion);
  let detail: string | undefined;
  if (!/^[0-9]+$/.test(resourceVersion)) detail = `strconv.ParseUint: parsing ${quoted}: invalid syntax`;
  else if (BigInt(resourceVersion) >= 2n ** 64n)
    detail = `strconv.ParseUint: parsing ${quoted}: value out of range`;
  if (detail === undefined) return undefined;
  return formatFieldError({
    type: 'FieldValueInvalid',
    field: 'resourceVersion',
    value: resourceVersion,
    detail,
  });
}

/**
 * Whether kube-apiserver's cache hands this list to etcd (cacher/delegator.go shouldDelegateList): Exact,
 * a continue, or a resourceVersion N with a limit ("legacy exact").
 */
function listGoesToStorage(resourceVersion: string, match: string, limit: number, cont: string): boolean {
  if (match === 'Exact') return true;
  if (match !== '') return false;
  return cont !== '' || (limit > 0 && resourceVersion !== '' && resourceVersion !== '0');
}

/**
 * Decodes and validates list/watch/get query parameters, in kube-apiserver's order: decoding (400), then
 * ListOptions validation (422), then the storage checks. For `get` only `resourceVersion` is read, as
 * GetOptions has nothing else; the other fields keep their defaults.
 *
 * A resourceVersion that is not a number is refused where kube-apiserver refuses it: a list that etcd
 * serves answers 400 "invalid resource version: …" (etcd3 store), checked before the continue rules; a
 * read the watch cache serves (get, watch, other lists) answers the cache's storage.InvalidError, which
 * kube-apiserver turns into a 422 Invalid with the bare field error as message and no details.
 *
 * A watch with `sendInitialEvents` and no `resourceVersionMatch` is refused as upstream refuses it (422), not
 * read as `NotOlderThan`: client-go falls back to LIST+WATCH on that 422, so leniency would only hide a
 * client bug that kube-apiserver reports.
 */
export function parseListOptions(query: URLSearchParams, verb: ListVerb): ListOptions {
  const resourceVersion = query.get('resourceVersion') ?? '';
  const options: ListOptions = {
    resourceVersion,
    resourceVersionMatch: '',
    limit: 0,
    continue: '',
    labelSelector: everythingLabels,
    fieldSelector: everythingFields,
    allowWatchBookmarks: false,
    sendInitialEvents: undefined,
    timeoutSeconds: undefined,
  };
  if (verb === 'get') {
    checkCachedResourceVersion(resourceVersion);
    return options;
  }

  options.labelSelector = parseLabelSelector(query.get('labelSelector') ?? '');
  options.fieldSelector = parseFieldSelector(query.get('fieldSelector') ?? '');
  // In the order of ListOptions' fields, which the query decoding follows.
  options.timeoutSeconds = queryInt64(query, 'timeoutSeconds');
  options.limit = Math.max(queryInt64(query, 'limit') ?? 0, 0);
  options.allowWatchBookmarks = queryBool(query, 'allowWatchBookmarks') ?? false;
  options.sendInitialEvents = queryBool(query, 'sendInitialEvents');
  options.continue = query.get('continue') ?? '';

  const match = query.get('resourceVersionMatch') ?? '';

  const errs =
    verb === 'watch'
      ? validateWatch(match, options.continue, options.sendInitialEvents)
      : validateList(resourceVersion, match, options.continue, options.sendInitialEvents);
  if (errs.length > 0) throw newInvalid('meta.k8s.io', 'ListOptions', '', errs);
  // Validation has ruled out any other value.
  options.resourceVersionMatch = match as ResourceVersionMatch;

  if (verb === 'list' && listGoesToStorage(resourceVersion, match, options.limit, options.continue)) {
    const problem = resourceVersionProblem(resourceVersion);
    if (problem !== undefined) throw newBadRequest(`invalid resource version: ${problem}`);
    if (options.continue !== '' && resourceVersion !== '' && resourceVersion !== '0') {
      throw newBadRequest('specifying resource version is not allowed when using continue');
    }
  }
  checkCachedResourceVersion(resourceVersion);
  return options;
}

/** The watch cache's refusal of a resourceVersion that is not a number (see parseListOptions). */
function checkCachedResourceVersion(resourceVersion: string): void {
  const problem = resourceVersionProblem(resourceVersion);
  if (problem !== undefined) throw newStatusError(422, 'Invalid', problem);
}

/** What a client may pass to `listOptionsToQuery`: any ListOptions field, selectors also as strings. */
export type ListQueryOptions = Partial<Omit<ListOptions, 'labelSelector' | 'fieldSelector'>> & {
  labelSelector?: string | LabelSelector;
  fieldSelector?: string | FieldSelector;
  /** Adds `watch=true`. */
  watch?: boolean;
};

/** Builds the query string for a list or watch request, leaving out parameters at their defaults. */
export function listOptionsToQuery(opts: ListQueryOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (opts.watch) query.set('watch', 'true');
  const labelSelector = opts.labelSelector?.toString() ?? '';
  if (labelSelector !== '') query.set('labelSelector', labelSelector);
  const fieldSelector = opts.fieldSelector?.toString() ?? '';
  if (fieldSelector !== '') query.set('fieldSelector', fieldSelector);
  if (opts.resourceVersion) query.set('resourceVersion', opts.resourceVersion);
  if (opts.resourceVersionMatch) query.set('resourceVersionMatch', opts.resourceVersionMatch);
  if (opts.limit) query.set('limit', String(opts.limit));
  if (opts.continue) query.set('continue', opts.continue);
  if (opts.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
  if (opts.sendInitialEvents !== undefined) query.set('sendInitialEvents', String(opts.sendInitialEvents));
  if (opts.timeoutSeconds !== undefined) query.set('timeoutSeconds', String(opts.timeoutSeconds));
  return query;
}
