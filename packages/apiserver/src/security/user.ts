import type { IncomingMessage } from 'node:http';

/** Who a request comes from, as kube-apiserver's user.Info names it. */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  /** Further facts the authenticator knows, by key (a ServiceAccount token's credential id and bound Pod, impersonated `Impersonate-Extra-*`). */
  extra?: Record<string, string[]>;
}

/** Every authenticated user is in this group as well, as in kube-apiserver. */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** A property of the request rather than a WeakMap entry: set on every request, it must cost next to nothing. */
const USER = Symbol('certkit.user');

type WithUser = IncomingMessage & { [USER]?: UserInfo };

/** Records who sent the request (authorization reads it; nothing else does yet). */
export function setRequestUser(req: IncomingMessage, user: UserInfo): void {
  (req as WithUser)[USER] = user;
}

/** Who sent the request, once it was authenticated; undefined for public paths and servers without authentication. */
export function requestUser(req: IncomingMessage): UserInfo | undefined {
  return (req as WithUser)[USER];
}
