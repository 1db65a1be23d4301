import type { KubeObject } from '@certkit/apimachinery';
import type { ClientConfig } from './config.ts';
import { RestMapper } from './discovery.ts';
import { RateLimiter } from './ratelimit.ts';
import { RestResourceClient } from './resource-client.ts';
import { type RequestHook, Transport } from './transport.ts';
import type { Client, ReadMode, ResourceClient, ResourceRef } from './types.ts';

/**
 * The entry point: one connection pool, one rate limiter and one discovery cache per API server, shared by
 * every ResourceClient made from it, so all controllers of a process together stay within qps/burst (as
 * client-go's clients made from one rest.Config with a shared RateLimiter).
 */

export interface KubeClientOptions extends ClientConfig {
  /** Requests per second; client-go's default 5 when unset or 0; negative disables client-side limiting. */
  qps?: number;
  /** Bucket size; default 10. */
  burst?: number;
  /** Called after every HTTP exchange (each retry too), for "REST requests by verb and code" metrics. */
  onRequest?: RequestHook;
  /** Retries of 429/5xx answers with Retry-After; default 10. */
  maxRetries?: number;
  /** Default `certkit/<version> (<os>/<arch>)`. */
  userAgent?: string;
}

export class KubeClient implements Client {
  readonly config: ClientConfig;
  readonly limiter: RateLimiter;
  readonly mapper: RestMapper;
  readonly #transport: Transport;

  constructor(options: KubeClientOptions) {
    const { qps, burst, onRequest, maxRetries, userAgent, ...config } = options;
    this.config = config;
    this.limiter = new RateLimiter({ qps, burst });
    this.#transport = new Transport(config, { limiter: this.limiter, onRequest, maxRetries, userAgent });
    this.mapper = new RestMapper(this.#transport);
  }

  /** The namespace of the kubeconfig context or service account; `default` when none was given. */
  get namespace(): string {
    return this.config.namespace || 'default';
  }

  /** A client for one resource, reading full objects or only their metadata. */
  resource<T extends KubeObject = KubeObject>(ref: ResourceRef, mode: ReadMode = 'full'): ResourceClient<T> {
    return new RestResourceClient<T>(this.#transport, ref, mode);
  }

  /**
   * A client for a kind found through discovery; rejects with NoKindMatchError (isNoKindMatch) if none serves
   * it.
   */
  async forKind<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    mode: ReadMode = 'full',
  ): Promise<ResourceClient<T>> {
    return this.resource<T>(await this.mapper.map(apiVersion, kind), mode);
  }

  /** GET of any path (e.g. `/version`, `/readyz`), JSON-decoded, through the same limiter and retries. */
  getJson<T = unknown>(path: string, options: { signal?: AbortSignal } = {}): Promise<T> {
    return this.#transport.json<T>({ method: 'GET', path, signal: options.signal });
  }

  /** Closes every connection, open watches included. */
  close(): void {
    this.#transport.close();
  }
}
