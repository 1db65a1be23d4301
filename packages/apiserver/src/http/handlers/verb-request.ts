/**
 * What every verb handler gets: the request, the resource it addresses (already looked up and checked for
 * scope and subresource by resources.ts) and the server around it.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { newBadRequest } from '@certkit/apimachinery';
import type { ResourceDefinition } from '../../registry/resource.ts';
import type { ObjectStore } from '../../registry/generic/store.ts';
import type { ResourceReader } from '../../watchcache/reader.ts';
import { negotiate } from '../negotiate.ts';
import type { IncludeObject, RenderOptions } from '../render.ts';
import type { ResourceContext } from '../resources.ts';
import type { ResourceRequest } from '../request-info.ts';
import { managerFromUserAgent } from '../../fieldmanager/managed-fields.ts';

export interface VerbRequest {
  context: ResourceContext;
  req: IncomingMessage;
  res: ServerResponse;
  request: ResourceRequest;
  query: URLSearchParams;
  store: ObjectStore;
  def: ResourceDefinition;
  reader: ResourceReader;
  /** The namespace, for a namespaced resource only. */
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  /** The apiVersion objects are rendered in (the request's version). */
  apiVersion: string;
}

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? 'Metadata';
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object')
    throw newBadRequest(`includeObject: unsupported value "${v}"`);
  return v;
}

/** How the response renders objects: negotiated from Accept, in the request's version, with includeObject. */
export function renderFor(verb: VerbRequest, shape: 'single' | 'list' | 'watch'): RenderOptions {
  return {
    rendering: negotiate(verb.req.headers.accept, shape),
    apiVersion: verb.apiVersion,
    includeObject: includeObject(verb.query),
  };
}

/**
 * The manager of an ordinary write, worked out only for objects that carry managedFields (were applied);
 * an empty fieldManager is unset, as in kube-apiserver's managerOrUserAgent.
 */
export function managerOf(verb: VerbRequest, options: { fieldManager: string }): () => string {
  return () => options.fieldManager || managerFromUserAgent(verb.req.headers['user-agent']);
}
