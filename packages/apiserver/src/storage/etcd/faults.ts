/**
 * etcd3 client fault handling replaced by our own (retries happen in EtcdStorage, which knows which requests
 * are safe to repeat), and how an etcd error is classified: not sent (safe to retry), unavailable, compacted.
 */

import { ClientClosedError, GRPCDeadlineExceededError, GRPCUnavailableError, type IOptions } from 'etcd3';

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

const NEVER_ABORTED = new AbortController().signal;

/**
 * Replaces etcd3's default fault handling (3 retries of anything "recoverable", and a circuit breaker that refuses
 * calls for 5 s after 3 failures): retrying a write whose response was lost would report a KeyExistsError or
 * ConflictError for the caller's own write, and the breaker would delay recovery after an etcd restart. Retries
 * happen in EtcdStorage, which knows which requests are safe to repeat.
 */
export const passThrough = {
  // async: a function that throws synchronously (etcd3's markFailed passes one) must become a rejection.
  execute: async <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    fn({ signal: NEVER_ABORTED }),
} as unknown as Policy;

/** Thrown instead of calling an endpoint that just refused connections; etcd3 then tries the next endpoint. */
class EndpointSkipped extends Error {}

/**
 * With several endpoints: after an endpoint refuses a connection, skip it for a while so that requests (and the
 * watch stream) go to the others at once instead of failing and being retried. A single endpoint is never skipped.
 */
export function skipRefusingEndpoint(skipMs: number): Policy {
  let skipUntil = 0;
  return {
    async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
      if (skipUntil > Date.now())
        throw new EndpointSkipped('etcd endpoint skipped after a refused connection');
      try {
        return await fn({ signal: NEVER_ABORTED });
      } catch (err) {
        if (isUnsent(err)) skipUntil = Date.now() + skipMs;
        throw err;
      }
    },
  } as unknown as Policy;
}

export const COMPACTED = 'required revision has been compacted';
export const FUTURE = 'required revision is a future revision';

/**
 * A write etcd refused for its size: past `--max-request-bytes` etcd answers `etcdserver: request is too large`,
 * and past that plus gRPC's allowance, its gRPC server refuses the message (`received message larger than max`).
 */
export const TOO_LARGE = /etcdserver: request is too large|received message larger than max/;

/** etcd refused the request before it could be applied: safe to retry even a write. */
export function isUnsent(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return (
    message.includes('No connection established') ||
    message.includes('failed to connect') ||
    message.includes('etcdserver: no leader') ||
    message.includes('etcdserver: too many requests') ||
    message.includes('etcdserver: not capable') ||
    err instanceof EndpointSkipped ||
    err instanceof ClientClosedError
  );
}

/** etcd could not be reached or did not answer in time; the request may or may not have been applied. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof GRPCUnavailableError || err instanceof GRPCDeadlineExceededError) return true;
  const message = err instanceof Error ? err.message : '';
  return (
    isUnsent(err) ||
    message.includes('etcdserver: leader changed') ||
    message.includes('etcdserver: request timed out') ||
    message.includes('etcdserver: server stopped') ||
    message.includes('raft proposal dropped')
  );
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
