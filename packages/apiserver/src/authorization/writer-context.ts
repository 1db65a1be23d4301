/**
 * Who is writing, for checks deep in a write that the store does not pass a user to: the RBAC escalation
 * check runs in the registry's admission hook. Set by the server around RBAC writes alone, so no other
 * request pays for the async context.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { UserInfo } from '../security/user.ts';

const writer = new AsyncLocalStorage<UserInfo>();

export function runAsWriter<T>(user: UserInfo, fn: () => T): T {
  return writer.run(user, fn);
}

/** The user of the request writing now; undefined for the server's own writes (bootstrap, aggregation). */
export function currentWriter(): UserInfo | undefined {
  return writer.getStore();
}
