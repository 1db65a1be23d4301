/** Reading the object body of a create or update: parsed by its Content-Type, then decoded as its type. */

import type { KubeObject } from '@certkit/apimachinery';
import { decodeWriteBody, writeTypes } from '../field-validation.ts';
import { parseObjectBody, PROTOBUF_MEDIA_TYPE } from '../protobuf.ts';
import type { FieldValidation } from '../request-options.ts';
import { readBody } from '../respond.ts';
import type { VerbRequest } from './verb-request.ts';

/**
 * The body's JSON text, for the checks that need it; none for protobuf bodies, nor for YAML ones, whose
 * repeated keys the YAML parser has already refused.
 */
function jsonText(raw: Buffer, verb: VerbRequest): { raw?: Buffer } {
  const type = (verb.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return type === PROTOBUF_MEDIA_TYPE || type === 'application/yaml' ? {} : { raw };
}

/** Reads the request body (the options are parsed in between, as upstream orders its errors). */
export function readObjectBody(verb: VerbRequest): Promise<Buffer> {
  return readBody(verb.req, verb.res, verb.context.bodyTimeoutMs);
}

/** Parses and decodes a create or update body as the resource's type, under fieldValidation. */
export async function decodeObjectBody(
  verb: VerbRequest,
  raw: Buffer,
  fieldValidation: FieldValidation,
): Promise<KubeObject> {
  const loaded = writeTypes(verb.def);
  const types = loaded instanceof Promise ? await loaded : loaded;
  const body = parseObjectBody(raw, verb.req.headers['content-type']) as KubeObject;
  decodeWriteBody(
    verb.def,
    types,
    body,
    verb.request.version,
    fieldValidation,
    jsonText(raw, verb),
    verb.res,
  );
  return body;
}
