/**
 * Impersonation, as kube-apiserver's impersonation filter: `Impersonate-User` (with `-Group`, `-Uid` and
 * `-Extra-<key>`) makes the request act as another user, provided the requester may `impersonate` each of
 * them: users (or serviceaccounts, for a ServiceAccount's username), groups, uids and userextras/<key>.
 */

import type { IncomingMessage } from 'node:http';
import { newBadRequest } from '@certkit/apimachinery';
import { AUTHENTICATED_GROUP, type UserInfo } from '../security/user.ts';
import type { Attributes } from './attributes.ts';
import { forbiddenError } from './attributes.ts';
import type { Authorizer } from './authorizer.ts';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const ANONYMOUS = 'system:anonymous';
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/** Whether the request asks to impersonate anyone: one cheap check on every request. */
export function wantsImpersonation(req: IncomingMessage): boolean {
  const headers = req.headers;
  if (headers[USER_HEADER] !== undefined || headers[GROUP_HEADER] !== undefined) return true;
  if (headers[UID_HEADER] !== undefined) return true;
  for (const name in headers) if (name.startsWith(EXTRA_PREFIX)) return true;
  return false;
}

/**
 * The user the request acts as: the impersonated one, once the requester was allowed to impersonate every
 * part of it (else 403, worded for the first part refused). Only called when wantsImpersonation.
 */
export function impersonate(req: IncomingMessage, requester: UserInfo, authorizer: Authorizer): UserInfo {
  const headers = req.headersDistinct;
  const username = headers[USER_HEADER]?.[0] ?? '';
  const groups = headers[GROUP_HEADER] ?? [];
  const uid = headers[UID_HEADER]?.[0];
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) {
    if (!name.startsWith(EXTRA_PREFIX) || !values) continue;
    extra[decodeExtraKey(name.slice(EXTRA_PREFIX.length))] = values;
  }
  const hasExtra = Object.keys(extra).length > 0;
  if (!username) {
    // kube-apiserver refuses this too (as an internal error); it is the client's mistake: a 400.
    if (groups.length > 0 || hasExtra || uid !== undefined) {
      throw newBadRequest(
        'impersonating groups, a uid or extra fields requires impersonating a user (Impersonate-User)',
      );
    }
    return requester;
  }

  const check = (attrs: Omit<Attributes, 'user' | 'verb' | 'resourceRequest' | 'path' | 'apiVersion'>) => {
    const full: Attributes = {
      ...attrs,
      user: requester,
      verb: 'impersonate',
      resourceRequest: true,
      path: '',
      apiVersion: '',
    };
    const decision = authorizer.authorize(full);
    if (!decision.allowed) throw forbiddenError(full, decision.reason);
  };
  const resource = (apiGroup: string, res: string, name: string, namespace = '', subresource = '') => ({
    apiGroup,
    resource: res,
    subresource,
    namespace,
    name,
  });

  const impersonated: UserInfo = { name: username, groups: [...groups] };
  if (username.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [namespace, name] = splitServiceAccount(username.slice(SERVICE_ACCOUNT_PREFIX.length));
    check(resource('', 'serviceaccounts', name, namespace));
    // A ServiceAccount impersonated without groups gets the groups its token would have.
    if (groups.length === 0) {
      impersonated.groups.push('system:serviceaccounts', `system:serviceaccounts:${namespace}`);
    }
  } else {
    check(resource('', 'users', username));
  }
  for (const group of groups) check(resource('', 'groups', group));
  for (const [key, values] of Object.entries(extra)) {
    for (const value of values) check(resource(AUTHENTICATION_GROUP, 'userextras', value, '', key));
  }
  if (uid !== undefined) {
    check(resource(AUTHENTICATION_GROUP, 'uids', uid));
    impersonated.uid = uid;
  }
  if (hasExtra) impersonated.extra = extra;
  // As kube: the impersonated user is authenticated (or anonymous), whatever groups were asked for.
  const implicit = username === ANONYMOUS ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP;
  if (!impersonated.groups.includes(implicit)) impersonated.groups.push(implicit);
  return impersonated;
}

/** `<ns>:<name>` of a ServiceAccount username; a malformed one is refused as kube refuses it. */
function splitServiceAccount(rest: string): [string, string] {
  const parts = rest.split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw newBadRequest(`invalid service account username ${JSON.stringify(SERVICE_ACCOUNT_PREFIX + rest)}`);
  }
  return [parts[0], parts[1]];
}

/** Extra keys travel percent-encoded in header names (kube's ImpersonateUserExtraHeaderPrefix), lowercased. */
function decodeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded).toLowerCase();
  } catch {
    throw newBadRequest(`invalid Impersonate-Extra header key ${JSON.stringify(encoded)}`);
  }
}
