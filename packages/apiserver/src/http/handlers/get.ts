/**
 * GET of one object: from the watch cache or storage, by the resourceVersion rules of watchcache/reader.ts.
 */

import { parseListOptions } from '@certkit/apimachinery';
import { objectBody } from '../render.ts';
import { sendJsonText } from '../respond.ts';
import { renderFor, type VerbRequest } from './verb-request.ts';

export async function handleGet(verb: VerbRequest, name: string): Promise<void> {
  const render = renderFor(verb, 'single');
  const { resourceVersion } = parseListOptions(verb.query, 'get');
  const obj = await verb.reader.get(verb.namespace, name, resourceVersion);
  sendJsonText(verb.res, 200, objectBody(verb.def, obj, render));
}
