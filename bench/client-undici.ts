import { isStatus, StatusError } from '@certkit/apimachinery';
import { Pool } from 'undici';
import type { ClientConfig } from '../packages/runtime/src/client/config.ts';
import { errorFromResponse } from '../packages/runtime/src/client/errors.ts';
import {
  type HttpRequestSpec,
  retryAfterSeconds,
  USER_AGENT,
} from '../packages/runtime/src/client/transport.ts';

/**
 * The candidate of bench/client.ts: what packages/runtime/src/client/transport.ts would be on undici (the
 * HTTP client behind Node's fetch), through its Pool and request() API directly rather than fetch, which
 * adds WHATWG Request/Response/Headers objects on top. It does what the runtime's Transport does per request
 * on the measured path (Bearer token, User-Agent, Accept, JSON body, StatusError on failure, a failure
 * Status in a 2xx) and leaves out what costs nothing there (rate limiter off, retries that never happen,
 * credential rotation). stream() hands RestResourceClient the undici body dressed as the IncomingMessage it
 * reads (statusCode, headers, complete), so watches and streamed lists run the same decoding code.
 */
export class UndiciTransport {
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #headers: Record<string, string>;

  constructor(config: ClientConfig) {
    const base = new URL(config.server);
    this.#prefix = base.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(base.origin, {
      connect: {
        ...(config.ca ? { ca: config.ca } : {}),
        ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
        rejectUnauthorized: !config.insecureSkipTlsVerify,
      },
    });
    this.#headers = { 'user-agent': USER_AGENT };
    if (config.token) this.#headers.authorization = `Bearer ${config.token}`;
  }

  async json<T>(spec: HttpRequestSpec): Promise<T> {
    const { statusCode, headers, body } = await this.#request(spec);
    const text = await body.text();
    if (statusCode < 200 || statusCode >= 300) throw this.#error(spec, statusCode, headers, text);
    if (text === '') return undefined as T;
    const value: unknown = JSON.parse(text);
    if (isStatus(value) && value.status === 'Failure') throw new StatusError(value);
    return value as T;
  }

  async stream(spec: HttpRequestSpec): Promise<{ request: { destroy(): void }; response: unknown }> {
    const { statusCode, headers, body } = await this.#request(spec);
    if (statusCode < 200 || statusCode >= 300) {
      throw this.#error(spec, statusCode, headers, await body.text());
    }
    const response = Object.assign(body, { statusCode, headers, complete: false });
    body.once('end', () => {
      response.complete = true;
    });
    return { request: { destroy: () => body.destroy() }, response };
  }

  close(): void {
    void this.#pool.destroy();
  }

  #request(spec: HttpRequestSpec) {
    const query = spec.query?.toString() ?? '';
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers: Record<string, string> = { ...this.#headers, accept: spec.accept ?? 'application/json' };
    if (body !== undefined) headers['content-type'] = spec.contentType ?? 'application/json';
    return this.#pool.request({
      method: spec.method,
      path: query ? `${this.#prefix}${spec.path}?${query}` : this.#prefix + spec.path,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(spec.signal ? { signal: spec.signal } : {}),
    });
  }

  #error(
    spec: HttpRequestSpec,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): StatusError {
    const header = (name: string) => (typeof headers[name] === 'string' ? headers[name] : undefined);
    return errorFromResponse(status, text, header('content-type'), retryAfterSeconds(header('retry-after')), {
      method: spec.method,
      ...spec.target,
    });
  }
}
