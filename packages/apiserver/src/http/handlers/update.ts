/** PUT of one object (or its status): replace it, guarded by the resourceVersion it carries. */

import { updateOptions } from '../request-options.ts';
import { objectBody } from '../render.ts';
import { sendJsonText } from '../respond.ts';
import { requestAdmission } from './admission-request.ts';
import { managerOf, renderFor, type VerbRequest } from './verb-request.ts';
import { decodeObjectBody, readObjectBody } from './write-body.ts';

export async function handleUpdate(verb: VerbRequest, name: string): Promise<void> {
  const render = renderFor(verb, 'single');
  const raw = await readObjectBody(verb);
  const options = updateOptions(verb.query);
  const body = await decodeObjectBody(verb, raw, options.fieldValidation);
  const updated = await verb.store.update(verb.namespace, name, body, {
    dryRun: options.dryRun,
    subresource: verb.subresource,
    version: verb.request.version,
    inputOwned: true,
    fieldManager: managerOf(verb, options),
    admission: requestAdmission(verb, options),
  });
  sendJsonText(verb.res, 200, objectBody(verb.def, updated, render));
}
