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
  // A Table is made of parsed objects, which a list from the cache would leave parsed in it.
  const consistentFromCache = render.rendering !== 'table';
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
