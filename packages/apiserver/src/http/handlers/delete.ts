/** DELETE of one object, with DeleteOptions from the body or else the query. */

import { objectBody } from '../render.ts';
import { deleteOptions } from '../request-options.ts';
import { readBody, sendJsonText } from '../respond.ts';
import { requestAdmission } from './admission-request.ts';
import { renderFor, type VerbRequest } from './verb-request.ts';

/** DeleteOptions, read from the body when there is one, else from the query. */
export async function readDeleteOptions(verb: VerbRequest): Promise<ReturnType<typeof deleteOptions>> {
  const raw = await readBody(verb.req, verb.res, verb.context.bodyTimeoutMs);
  return deleteOptions(verb.query, raw, verb.req.headers['content-type']);
}

export async function handleDelete(verb: VerbRequest, name: string): Promise<void> {
  const render = renderFor(verb, 'single');
  const options = await readDeleteOptions(verb);
  const deleted = await verb.store.delete(verb.namespace, name, {
    ...options,
    admission: requestAdmission(verb, { ...options, dryRun: options.dryRun === true }),
  });
  sendJsonText(verb.res, 200, objectBody(verb.def, deleted, render));
}
