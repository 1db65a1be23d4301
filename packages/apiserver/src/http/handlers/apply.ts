/**
 * PATCH with `application/apply-patch+yaml`: server-side apply (fieldmanager/), which may create the object.
 */

import { serverSideApply } from '../../fieldmanager/server-side-apply.ts';
import type { RenderOptions } from '../render.ts';
import { objectBody } from '../render.ts';
import type { PatchOptions } from '../request-options.ts';
import { sendJsonText } from '../respond.ts';
import type { VerbRequest } from './verb-request.ts';
import { requestAdmission } from './admission-request.ts';

export async function handleApply(
  verb: VerbRequest,
  name: string,
  raw: Buffer,
  options: PatchOptions,
  render: RenderOptions,
): Promise<void> {
  const applied = await serverSideApply({
    store: verb.store,
    namespace: verb.namespace,
    name,
    subresource: verb.subresource,
    version: verb.request.version,
    body: raw,
    dryRun: options.dryRun,
    fieldManager: options.fieldManager,
    force: options.force,
    admission: requestAdmission(verb, options),
  });
  sendJsonText(verb.res, applied.created ? 201 : 200, objectBody(verb.def, applied.object, render));
}
