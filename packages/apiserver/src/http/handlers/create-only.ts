/** POST to a create-only resource (SubjectAccessReview and friends): the answer is computed, never stored. */

import { newBadRequest, newMethodNotAllowed, newNotFound } from '@certkit/apimachinery';
import { requestUser } from '../../security/user.ts';
import { createOptions } from '../request-options.ts';
import { sendJson } from '../respond.ts';
import type { VerbRequest } from './verb-request.ts';
import { decodeObjectBody, readObjectBody } from './write-body.ts';

export async function handleCreateOnly(verb: VerbRequest): Promise<void> {
  // kube-apiserver serves these kinds with the one verb: anything else is its 405.
  if (verb.req.method !== 'POST' || verb.name !== undefined) throw newMethodNotAllowed();
  if (verb.def.namespaced && verb.namespace === undefined) {
    // LocalSubjectAccessReview outside a namespace: kube-apiserver has no such route.
    const err = newNotFound({ group: '', resource: '' }, '');
    err.status.message = 'the server could not find the requested resource';
    err.status.details = {};
    throw err;
  }
  const handler = verb.context.registry.createOnlyHandler(verb.def);
  if (!handler) throw newMethodNotAllowed();
  const raw = await readObjectBody(verb);
  const options = createOptions(verb.query);
  const body = await decodeObjectBody(verb, raw, options.fieldValidation);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw newBadRequest(`the object provided is unrecognized (must be of type ${verb.def.kind})`);
  }
  if (body.kind !== undefined && body.kind !== verb.def.kind) {
    throw newBadRequest(
      `the API version in the data (${body.apiVersion ?? ''}) does not match the expected API version (${verb.apiVersion}) or kind ${JSON.stringify(body.kind)} is not ${verb.def.kind}`,
    );
  }
  const answer = handler(body, {
    user: requestUser(verb.req),
    namespace: verb.namespace,
    apiVersion: verb.apiVersion,
  });
  // kube answers a create of these kinds with 201 Created, as any create.
  sendJson(verb.res, 201, answer);
}
