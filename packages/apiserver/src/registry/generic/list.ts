/**
 * Lists from storage: at a resourceVersion or the latest, a page at a time for unlimited lists, with limit and
 * continue tokens, and the wait for a future revision.
 */

import {
  decodeContinueToken,
  encodeContinueToken,
  type ListOptions,
  newBadRequest,
  newExpired,
  newTimeout,
  type StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { CompactedError, FutureRevisionError, type KeyValue } from '../../storage/types.ts';
import { listPrefix } from '../resource.ts';
import { parseMetadataBytes } from '../stored-json.ts';
import type { ListResult, PagedList } from './types.ts';
import type { ObjectStore } from './store.ts';
import { checkFieldSelector, matcher, metadataMatcher } from './selectors.ts';

interface ListStart {
  matches: (obj: StoredObject) => boolean;
  /** The namespace listed (from the path or a metadata.namespace field selector). */
  ns: string | undefined;
  prefix: string;
  revision: number;
  startKey: string;
  /** The one name a metadata.name field selector asks for, when the list is then a single key. */
  exactName: string | undefined;
}

/** Keys read per storage round trip when a selective list filters out what it reads. */
const SELECTIVE_LIST_CHUNK = 1000;
/** Stored bytes a page of a paged list holds about (ObjectStore.listPaged). */
const LIST_PAGE_BYTES = 1024 * 1024;
/** Keys of a paged list's first page, before the objects' size is known. */
const FIRST_LIST_PAGE_KEYS = 16;
const MAX_LIST_PAGE_KEYS = 1000;

/** How many keys the next page of a paged list reads, from the size of the objects on the last one. */
function keysPerPage(last: KeyValue<Uint8Array>[]): number {
  let bytes = 0;
  for (const kv of last) bytes += kv.value.length;
  const average = bytes / last.length || 1;
  return Math.max(1, Math.min(MAX_LIST_PAGE_KEYS, Math.floor(LIST_PAGE_BYTES / average)));
}

/** How long a read at a future resourceVersion waits for it (kube-apiserver's blockTimeout). */
const FRESHNESS_WAIT_MS = 3000;

/** Where a list starts: its key range, the revision to read at (0: current), and its selector. */
export async function listStart(
  store: ObjectStore,
  namespace: string | undefined,
  options: ListOptions,
): Promise<ListStart> {
  checkFieldSelector(store, options.fieldSelector);
  const matches = matcher(store, options.labelSelector, options.fieldSelector);
  const ns = namespace || options.fieldSelector.requiresExactMatch('metadata.namespace') || undefined;
  const prefix = listPrefix(store.def, ns);
  let revision = 0;
  let startKey = prefix;
  if (options.continue) {
    const token = decodeContinueToken(options.continue);
    revision = token.resourceVersion === -1 ? 0 : token.resourceVersion;
    startKey = store.prefix + token.startKey;
    if (!startKey.startsWith(prefix))
      throw newBadRequest('invalid continue token: key outside the requested range');
  } else if (
    options.resourceVersionMatch === 'Exact' ||
    (options.resourceVersion !== '' &&
      options.resourceVersion !== '0' &&
      options.limit > 0 &&
      options.resourceVersionMatch === '')
  ) {
    revision = Number(options.resourceVersion);
  } else if (options.resourceVersion !== '' && options.resourceVersion !== '0') {
    await waitForRevision(store, Number(options.resourceVersion));
  }
  // A name in the field selector is a single key: no need to read the whole range.
  const name = options.fieldSelector.requiresExactMatch('metadata.name');
  const exactName =
    name !== undefined && (!store.def.namespaced || ns) && !options.continue ? name : undefined;
  return { matches, ns, prefix, revision, startKey, exactName };
}

export async function list(
  store: ObjectStore,
  namespace: string | undefined,
  options: ListOptions,
): Promise<ListResult> {
  const start = await listStart(store, namespace, options);
  const { matches, ns, prefix, exactName } = start;
  let { revision, startKey } = start;
  if (exactName !== undefined) return listOne(store, ns, exactName, revision, matches);

  const limit = options.limit;
  const selective = !options.labelSelector.empty || !options.fieldSelector.empty;
  const items: StoredObject[] = [];
  let more = false;
  let lastKey = '';
  let count: number | undefined;
  try {
    for (;;) {
      const want =
        limit > 0
          ? selective
            ? Math.max(limit - items.length, SELECTIVE_LIST_CHUNK)
            : limit - items.length
          : 0;
      const page = await store.storage.range(prefix, {
        revision,
        startKey,
        limit: want,
        count: limit > 0 && !selective && revision === 0 && items.length === 0,
      });
      revision = page.revision;
      if (page.count !== undefined) count = page.count;
      for (const kv of page.kvs) {
        const obj = store.decode(kv.value, kv.modRevision);
        lastKey = kv.key;
        if (!matches(obj)) continue;
        items.push(obj);
        if (limit > 0 && items.length === limit) break;
      }
      const stoppedEarly = limit > 0 && items.length === limit && lastKey !== page.kvs.at(-1)?.key;
      more = stoppedEarly || page.more;
      if (limit === 0 || items.length >= limit || !page.more) break;
      startKey = `${lastKey}\u0000`;
    }
  } catch (err) {
    if (err instanceof CompactedError) throw expired(store, options, prefix);
    // Exact (or a continue token) at a revision not written yet: as kube-apiserver, wait briefly for it and
    // then answer 504 "Too large resource version" (storage's listReadError), rather than fail.
    if (err instanceof FutureRevisionError && items.length === 0) {
      await waitForRevision(store, err.requestedRevision);
      return list(store, namespace, options);
    }
    throw err;
  }
  const result: ListResult = { items, resourceVersion: String(revision) };
  if (more && limit > 0) {
    result.continue = encodeContinueToken(revision, `${lastKey.slice(store.prefix.length)}\u0000`);
    if (count !== undefined) result.remainingItemCount = count - items.length;
  }
  return result;
}

/**
 * A list without a limit, to be written out as it is read rather than held whole (a namespace may hold
 * gigabytes): the first page is read here, so that its revision is the list's resourceVersion and a
 * failure is still the request's to answer; the rest, at that revision, as `pages` is iterated. A page
 * holds about LIST_PAGE_BYTES of stored values, however large the objects are. Pages hold the stored
 * key-values that match, as bytes and undecoded: the caller encodes them one at a time (render.ts
 * storedListEncoding), so that a list of large objects makes no string of each.
 */
export async function listPaged(
  store: ObjectStore,
  namespace: string | undefined,
  options: ListOptions,
): Promise<PagedList> {
  if (options.limit > 0) throw new Error('listPaged is for lists without a limit');
  const { matches, ns, prefix, revision, startKey, exactName } = await listStart(store, namespace, options);
  const read = (revision: number, startKey: string, limit: number) =>
    store.storage.rangeBytes(prefix, { revision, startKey, limit }).catch((err) => {
      throw err instanceof CompactedError ? expired(store, options, prefix) : err;
    });
  // Exact (or a continue token) at a revision not written yet: wait briefly for it, then 504 "Too large
  // resource version", as list() does; later pages read at the first one's revision, which exists.
  const readFirst = (startKey: string, limit: number) =>
    read(revision, startKey, limit).catch(async (err) => {
      if (!(err instanceof FutureRevisionError)) throw err;
      await waitForRevision(store, err.requestedRevision);
      return read(revision, startKey, limit);
    });
  const keep = storedMatcher(store, options, matches);
  if (exactName !== undefined) {
    // A name in the field selector is a single key: no need to read the whole range.
    const key = store.key(ns, exactName);
    const page = await readFirst(key, 1);
    return {
      resourceVersion: String(page.revision),
      pages: [page.kvs.filter((kv) => kv.key === key && (keep?.(kv) ?? true))],
    };
  }
  let page = await readFirst(startKey, FIRST_LIST_PAGE_KEYS);
  const at = page.revision;
  async function* pages(): AsyncGenerator<KeyValue<Uint8Array>[]> {
    for (;;) {
      const { kvs, more } = page;
      yield keep === undefined ? kvs : kvs.filter(keep);
      if (!more || kvs.length === 0) return;
      page = await read(at, `${kvs[kvs.length - 1].key}\u0000`, keysPerPage(kvs));
    }
  }
  return { resourceVersion: String(at), pages: pages() };
}

/**
 * Selects stored key-values by the list's selectors: by their metadata alone when the selectors name
 * nothing else (parsing a few hundred bytes rather than the object), else by the decoded object.
 * Undefined when there are no selectors.
 */
export function storedMatcher(
  store: ObjectStore,
  options: ListOptions,
  matches: (obj: StoredObject) => boolean,
): ((kv: KeyValue<Uint8Array>) => boolean) | undefined {
  if (options.labelSelector.empty && options.fieldSelector.empty) return undefined;
  const onMetadata = metadataMatcher(store, options.labelSelector, options.fieldSelector);
  return (kv) => {
    const metadata = onMetadata && parseMetadataBytes(kv.value);
    if (metadata !== undefined) return onMetadata!(metadata);
    return matches(store.decodeBytes(kv));
  };
}

export async function listOne(
  store: ObjectStore,
  namespace: string | undefined,
  name: string,
  revision: number,
  matches: (obj: StoredObject) => boolean,
): Promise<ListResult> {
  const key = store.key(namespace, name);
  const page = await store.storage.range(key, { revision, limit: 1 }).catch(async (err) => {
    if (err instanceof CompactedError)
      throw newExpired('The resourceVersion for the provided list is too old.');
    if (err instanceof FutureRevisionError) {
      await waitForRevision(store, err.requestedRevision);
      return store.storage.range(key, { revision, limit: 1 });
    }
    throw err;
  });
  const kv = page.kvs.find((k) => k.key === key);
  const obj = kv && store.decode(kv.value, kv.modRevision);
  return { items: obj && matches(obj) ? [obj] : [], resourceVersion: String(page.revision) };
}

export function expired(store: ObjectStore, options: ListOptions, prefix: string): StatusError {
  if (!options.continue) return newExpired('The resourceVersion for the provided list is too old.');
  const token = decodeContinueToken(options.continue);
  const err = newExpired(
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in store response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
  err.status.metadata.continue = encodeContinueToken(-1, token.startKey || prefix.slice(store.prefix.length));
  return err;
}

/** A read "not older than N" waits briefly for N to exist, then answers 504 as kube-apiserver does. */
export async function waitForRevision(store: ObjectStore, revision: number): Promise<void> {
  const deadline = Date.now() + FRESHNESS_WAIT_MS;
  for (;;) {
    const current = await store.storage.currentRevision();
    if (current >= revision) return;
    if (Date.now() >= deadline) {
      const err = newTimeout(`Too large resource version: ${revision}, current: ${current}`, 1);
      err.status.details!.causes = [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ];
      throw err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
