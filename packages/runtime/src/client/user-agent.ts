/**
 * The User-Agent of the requests made within a piece of work, when it is not the client's own: client-go's
 * clients each carry a User-Agent, and a process that builds one client per controller (cert-manager's
 * `cert-manager-<controller>/…`) is told apart by the API server through it: kube names the field manager of
 * an update or create without `fieldManager` after the User-Agent up to its first `/`, so an object's
 * managedFields say which controller wrote what. Here controllers share one client; a Controller runs each
 * reconcile under its User-Agent (manager/controller.ts), and the transport sends it for every request that
 * reconcile makes, however deep.
 */

import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/** Runs `fn` with `userAgent` on every request it makes (awaited continuations included). */
export function withUserAgent<T>(userAgent: string, fn: () => T): T {
  return current.run(userAgent, fn);
}

/** The User-Agent of the work running now, if one was set. */
export function currentUserAgent(): string | undefined {
  return current.getStore();
}
