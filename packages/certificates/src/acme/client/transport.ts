import type { Agent } from 'undici';
import type { HeaderValue } from './headers.ts';
import type { AcmeAction, AcmeClientMetrics } from './metrics.ts';
import { AcmeTransportError } from './problem.ts';
import { untrustedChainMessage } from './tls-failure.ts';

/**
 * HTTP to one ACME server: an undici Agent of its own (so the Issuer's `caBundle` and `skipTLSVerify` apply
 * to this server only), cert-manager's timeouts (90 s per request, 30 s to connect, 10 s TLS handshake is
 * within the connect timeout here), a 16 MiB cap on bodies as upstream, and one metrics observation per
 * round trip.
 *
 * undici is imported on the first request, not with this module: the controller loads the ACME code with its
 * other controllers, and undici (~100 modules, ~20 MB of RSS) would otherwise sit in every idle controller,
 * ACME issuer or not (docs/adr/1101-controller-process-setup.md).
 */

/** undici, imported once, when the first ACME request is made. */
let undici: Promise<typeof import('undici')> | undefined;
const loadUndici = () => (undici ??= import('undici'));

export interface AcmeTransportOptions {
  /** PEM CAs that replace the system roots for this server (the Issuer's `caBundle`). */
  caBundle?: string | Buffer;
  /** No TLS verification at all (the Issuer's `skipTLSVerify`); exclusive with caBundle by validation. */
  skipTLSVerify?: boolean;
  /** Whole-request deadline; 90 s as cert-manager's ACME HTTP client. */
  timeoutMs?: number;
  userAgent?: string;
  metrics?: AcmeClientMetrics;
}

export interface AcmeHttpResponse {
  url: string;
  status: number;
  headers: Record<string, HeaderValue>;
  body: Buffer;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 90_000;
const CONNECT_TIMEOUT_MS = 30_000;

export class AcmeTransport {
  readonly #options: AcmeTransportOptions;
  #agent: Promise<Agent> | undefined;
  #closed = false;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #metrics: AcmeClientMetrics | undefined;

  constructor(options: AcmeTransportOptions = {}) {
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#userAgent = options.userAgent ?? 'certkit';
    this.#metrics = options.metrics;
  }

  /** The Agent for this server, made with the first request. */
  #dispatcher(): Promise<Agent> {
    // As a closed undici Agent would: no request after close(), even when none was made before it.
    if (this.#closed) return Promise.reject(new Error('the ACME transport is closed'));
    return (this.#agent ??= loadUndici().then(
      ({ Agent }) =>
        new Agent({
          // HTTP/1.1, as cert-manager's Go client speaks to ACME servers (a transport with its own TLS
          // configuration does not attempt HTTP/2). undici offers HTTP/2 by default, and with it requests to
          // Pebble stalled for good under load: streams open with no answer, no timeout firing, every Order
          // and Challenge worker waiting (docs/adr/1013-acme-requests-cut-and-duration-summary.md).
          allowH2: false,
          connectTimeout: CONNECT_TIMEOUT_MS,
          connect: {
            ...(this.#options.caBundle !== undefined ? { ca: this.#options.caBundle } : {}),
            rejectUnauthorized: !this.#options.skipTLSVerify,
          },
        }),
    ));
  }

  async send(
    action: AcmeAction,
    method: 'GET' | 'HEAD' | 'POST',
    url: string,
    init: { body?: string; contentType?: string; accept?: string } = {},
  ): Promise<AcmeHttpResponse> {
    const parsed = new URL(url);
    const started = performance.now();
    let status = '999';
    try {
      const headers: Record<string, string> = { 'user-agent': this.#userAgent };
      if (init.contentType) headers['content-type'] = init.contentType;
      if (init.accept) headers.accept = init.accept;
      const dispatcher = await this.#dispatcher();
      const { request } = await loadUndici();
      const response = await request(url, {
        method,
        headers,
        body: init.body,
        dispatcher,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      status = String(response.statusCode);
      const body = await readCapped(response.body, url);
      return { url, status: response.statusCode, headers: response.headers, body };
    } catch (error) {
      if (error instanceof AcmeTransportError) throw error;
      const caBundle = this.#options.caBundle !== undefined;
      throw new AcmeTransportError(url, error, untrustedChainMessage(error, caBundle));
    } finally {
      this.#metrics?.observe(
        { scheme: parsed.protocol.replace(/:$/, ''), host: parsed.host, action, method, status },
        (performance.now() - started) / 1000,
      );
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    // Never used: no Agent was made, nothing to close (and no reason to load undici for it).
    if (this.#agent) await (await this.#agent).close();
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, url: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      throw new AcmeTransportError(url, new Error(`response body larger than ${MAX_BODY_BYTES} bytes`));
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
