/** GET with `watch` (or the legacy /watch/ path): a watch of the collection, or of one object by name. */

import {
  escapeFieldValue,
  type ListOptions,
  newBadRequest,
  parseFieldSelector,
  parseListOptions,
} from '@certkit/apimachinery';
import type { ReadRendering } from '../../watchcache/reader.ts';
import type { RenderOptions } from '../render.ts';
import { isWatchRequest, type ResourceRequest } from '../request-info.ts';
import { serveWatch } from '../watch.ts';
import { renderFor, type VerbRequest } from './verb-request.ts';

export function isWatch(query: URLSearchParams, request: ResourceRequest): boolean {
  return isWatchRequest(request, query);
}

function readRendering(render: RenderOptions): ReadRendering {
  if (render.rendering === 'metadata') return { kind: 'metadata' };
  if (render.rendering === 'table') return { kind: 'table' };
  return { kind: 'object', apiVersion: render.apiVersion };
}

/** A watch of one named object is a watch of the collection selected by metadata.name. */
function withName(options: ListOptions, name: string): ListOptions['fieldSelector'] {
  const existing = options.fieldSelector.requiresExactMatch('metadata.name');
  if (existing !== undefined && existing !== name) {
    throw newBadRequest(
      `field selector "${options.fieldSelector.toString()}" conflicts with the name "${name}"`,
    );
  }
  // Reuse the selector parser so the combined selector behaves like one the client sent.
  const text = [options.fieldSelector.toString(), `metadata.name=${escapeFieldValue(name)}`]
    .filter(Boolean)
    .join(',');
  return parseFieldSelector(text);
}

export async function handleWatch(verb: VerbRequest): Promise<void> {
  const { def, name, namespace } = verb;
  const options = parseListOptions(verb.query, 'watch');
  const watchOptions: ListOptions = name ? { ...options, fieldSelector: withName(options, name) } : options;
  const render = renderFor(verb, 'watch');
  const rendering = readRendering(render);
  await serveWatch(
    verb.req,
    verb.res,
    def,
    watchOptions,
    render,
    (sink) => verb.reader.watch(namespace, watchOptions, rendering, sink),
    verb.context.watchCounters(def),
  );
}
