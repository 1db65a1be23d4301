/**
 * What authorization decides on, as kube-apiserver's authorizer.Attributes: who, which verb, and either a
 * resource (group, resource, subresource, namespace, name) or a non-resource path. Built from the request as
 * kube's RequestInfoFactory does.
 */

import { goQuote, newForbidden, type StatusError } from '@certkit/apimachinery';
import { isWatchRequest, type ParsedPath } from '../http/request-info.ts';
import type { RequestTarget } from '../http/request-target.ts';
import type { UserInfo } from '../security/user.ts';

export interface Attributes {
  user: UserInfo;
  verb: string;
  /** False for non-resource paths (/version, /healthz, discovery), which rules match by nonResourceURLs. */
  resourceRequest: boolean;
  /** The request path, for non-resource requests. */
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** The attributes of an HTTP request by an authenticated user. */
export function requestAttributes(
  user: UserInfo,
  method: string,
  url: RequestTarget,
  parsed: ParsedPath,
): Attributes {
  if (parsed.kind !== 'resource') {
    // Discovery (/api, /apis/g/v) is a non-resource request too, as in kube: fewer than three path parts.
    return nonResourceAttributes(user, method.toLowerCase(), url.pathname);
  }
  const r = parsed.request;
  let name = r.name ?? '';
  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = isWatchRequest(r, url.searchParams) ? 'watch' : r.name ? 'get' : 'list';
      // A list or watch of one object by `metadata.name=` may be allowed by a rule restricted to that name.
      if (!r.name) name = nameFromFieldSelector(url.searchParams.get('fieldSelector'));
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = r.name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = method.toLowerCase();
  }
  return {
    user,
    verb,
    resourceRequest: true,
    path: url.pathname,
    apiGroup: r.group,
    apiVersion: r.version,
    resource: r.resource,
    subresource: r.subresource ?? '',
    // kube's RequestInfo puts a namespace's own requests inside it: /api/v1/namespaces/x is in namespace x.
    namespace: r.namespace ?? (r.resource === 'namespaces' && r.name ? r.name : ''),
    name,
  };
}

export function nonResourceAttributes(user: UserInfo, verb: string, path: string): Attributes {
  return {
    user,
    verb,
    resourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}

/** `metadata.name=x` (or `==`) among a field selector's terms; '' when it names no single object. */
function nameFromFieldSelector(selector: string | null): string {
  if (!selector) return '';
  for (const term of selector.split(',')) {
    const match = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (match) return match[1];
  }
  return '';
}

/** The request's denial, worded as kube-apiserver's authorization filter words it. */
export function forbiddenMessage(attrs: Attributes): string {
  const who = `User ${goQuote(attrs.user.name)}`;
  if (!attrs.resourceRequest) return `${who} cannot ${attrs.verb} path ${goQuote(attrs.path)}`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace ${goQuote(attrs.namespace)}` : 'at the cluster scope';
  return `${who} cannot ${attrs.verb} resource ${goQuote(resource)} in API group ${goQuote(attrs.apiGroup)} ${scope}`;
}

/**
 * 403 Forbidden as kube-apiserver's NewForbidden renders it: `secrets "x" is forbidden: User ...`, with
 * the group and resource (not the kind) in the details, and the authorizer's reason after a colon if it gave one.
 */
export function forbiddenError(attrs: Attributes, reason = ''): StatusError {
  const detail = reason ? `${forbiddenMessage(attrs)}: ${reason}` : forbiddenMessage(attrs);
  const qualified = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  const err = newForbidden(
    !attrs.resource
      ? `forbidden: ${detail}`
      : attrs.name
        ? `${qualified} ${goQuote(attrs.name)} is forbidden: ${detail}`
        : `${qualified} is forbidden: ${detail}`,
  );
  const details: Record<string, string> = {};
  if (attrs.name) details.name = attrs.name;
  if (attrs.apiGroup) details.group = attrs.apiGroup;
  if (attrs.resource) details.kind = attrs.resource;
  err.status.details = details;
  return err;
}
