/** DELETE of a collection: every object the list options select, answered with the list of them. */

import { parseListOptions } from '@certkit/apimachinery';
import { ListBodyWriter, writeList } from '../list-writer.ts';
import { listMeta, objectListEncoding } from '../render.ts';
import { readDeleteOptions } from './delete.ts';
import { requestAdmission } from './admission-request.ts';
import { renderFor, type VerbRequest } from './verb-request.ts';

export async function handleDeleteCollection(verb: VerbRequest): Promise<void> {
  const render = renderFor(verb, 'list');
  // A collection's ListOptions are read (and refused) before its DeleteOptions, as upstream does.
  const listOptions = parseListOptions(verb.query, 'list');
  const options = await readDeleteOptions(verb);
  const deleted = await verb.store.deleteCollection(verb.namespace, listOptions, {
    ...options,
    admission: requestAdmission(verb, { ...options, dryRun: options.dryRun === true }),
  });
  const resourceVersion = deleted.at(-1)?.metadata.resourceVersion ?? '';
  const metadata = listMeta({ items: deleted, resourceVersion });
  const writer = new ListBodyWriter(verb.res, verb.context.listStallTimeoutMs);
  await writeList(writer, objectListEncoding(verb.def, render, metadata), [deleted]);
}
