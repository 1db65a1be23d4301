/** POST to a collection: create an object. */

import { requestUser } from '../../security/user.ts';
import { createOptions } from '../request-options.ts';
import { objectBody } from '../render.ts';
import { sendJsonText } from '../respond.ts';
import { requestAdmission } from './admission-request.ts';
import { renderFor, type VerbRequest } from './verb-request.ts';
import { decodeObjectBody, readObjectBody } from './write-body.ts';

export async function handleCreate(verb: VerbRequest): Promise<void> {
  const render = renderFor(verb, 'single');
  const raw = await readObjectBody(verb);
  const options = createOptions(verb.query);
  const body = await decodeObjectBody(verb, raw, options.fieldValidation);
  // The parsed body is this request's alone: the store may keep and change it rather than copy it.
  const created = await verb.store.create(verb.namespace, body, {
    user: requestUser(verb.req),
    dryRun: options.dryRun,
    version: verb.request.version,
    inputOwned: true,
    admission: requestAdmission(verb, options),
  });
  sendJsonText(verb.res, 201, objectBody(verb.def, created, render));
}
