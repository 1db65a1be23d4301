/**
 * GET of a collection: from the watch cache or storage (a page at a time when unlimited), written as encoded
 * with back-pressure, never the whole list as one string (list-writer.ts).
 */

import { parseListOptions } from '@certkit/apimachinery';
import type { KeyValue } from '../../storage/types.ts';
import { ListBodyWriter, writeList } from '../list-writer.ts';
import { cachedListEncoding, listMeta, objectListEncoding, storedListEncoding } from '../render.ts';
import { renderFor, type VerbRequest } from './verb-request.ts';

export async function handleList(verb: VerbRequest): Promise<void> {
  const { def, store } = verb;
  const render = renderFor(verb, 'list');
  // Metadata only: cut out of the cached values, the same bytes storage gives (render.ts), with nothing parsed
  // or kept in the cache for it. A Table is made of parsed objects, which the cache would keep; whole objects
  // from the cache carry their resourceVersion first in metadata, where storage's decode puts it last.
  const consistentFromCache = render.rendering === 'metadata';
  const result = await verb.reader.list(
    verb.namespace,
    parseListOptions(verb.query, 'list'),
    consistentFromCache,
  );
  const writer = new ListBodyWriter(verb.res, verb.context.listStallTimeoutMs);
  if ('entries' in result) await writeList(writer, cachedListEncoding(def, result, render), [result.entries]);
  else if ('pages' in result) {
    const metadata = { resourceVersion: result.resourceVersion };
    const decode = (kv: KeyValue<Uint8Array>) => store.decodeBytes(kv);
    await writeList(writer, storedListEncoding(def, render, metadata, decode), result.pages);
  } else await writeList(writer, objectListEncoding(def, render, listMeta(result)), [result.items]);
}
