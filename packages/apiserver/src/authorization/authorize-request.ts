/**
 * The server's authorization step, after authentication (as kube-apiserver's impersonation and authorization
 * filters): whom the request acts as, then whether that user may do it; 403 Forbidden otherwise.
 */

import type { IncomingMessage } from 'node:http';
import type { ParsedPath } from '../http/request-info.ts';
import type { RequestTarget } from '../http/request-target.ts';
import type { UserInfo } from '../security/user.ts';
import { forbiddenError, requestAttributes } from './attributes.ts';
import type { Authorizer } from './authorizer.ts';
import { impersonate, wantsImpersonation } from './impersonation.ts';

/** The user the request acts as (the impersonated one, or user); throws 403 when it may not. */
export function authorizeRequest(
  req: IncomingMessage,
  user: UserInfo,
  url: RequestTarget,
  parsed: ParsedPath,
  authorizer: Authorizer,
): UserInfo {
  const acting = wantsImpersonation(req) ? impersonate(req, user, authorizer) : user;
  const attrs = requestAttributes(acting, req.method ?? 'GET', url, parsed);
  const decision = authorizer.authorize(attrs);
  if (!decision.allowed) throw forbiddenError(attrs, decision.reason);
  return acting;
}
