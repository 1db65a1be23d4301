/**
 * Sends one DNS message and returns the reply's bytes: over UDP, over TCP (RFC 1035 §4.2.2, two-byte length
 * prefix), or over HTTPS (DoH, RFC 8484 POST, as cert-manager's `httpDNSClient`), each with a deadline. Choosing between them (UDP first, TCP on
 * truncation) is the caller's job; see query.ts and rfc2136.ts.
 */

import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { request as httpsRequest } from 'node:https';
import { connect, isIP } from 'node:net';
import { formatNameserver, type Nameserver } from './nameserver.ts';

export type Protocol = 'udp' | 'tcp';

/** cert-manager's DNS timeout (pkg/issuer/acme/dns/util/wait.go `DNSTimeout`). */
export const DEFAULT_DNS_TIMEOUT_MS = 10_000;

/** A DoH reply larger than this is refused (cert-manager's `maxDNSResponseSize`). */
const MAX_DOH_RESPONSE_BYTES = 128 * 1024;

export class DnsTransportError extends Error {
  /** True when the server did not answer in time (a UDP timeout makes cert-manager retry over TCP). */
  readonly timedOut: boolean;
  constructor(message: string, timedOut = false) {
    super(message);
    this.name = 'DnsTransportError';
    this.timedOut = timedOut;
  }
}

export interface ExchangeOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** CAs trusted for DoH servers instead of the system's (PEM): a private resolver, or a test's. */
  ca?: string;
}

/** The address to dial: IP literals as they are, host names through the system resolver (as Go's dialer). */
async function resolveHost(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const family = isIP(host);
  if (family === 4 || family === 6) return { address: host, family };
  try {
    const found = await lookup(host);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch (err) {
    throw new DnsTransportError(`cannot resolve nameserver host ${host}: ${(err as Error).message}`);
  }
}

/** Runs `start` with a deadline and the caller's abort signal; `start` gets a finish callback and a cleanup slot. */
function withDeadline<T>(
  what: string,
  options: ExchangeOptions,
  start: (resolve: (value: T) => void, reject: (err: Error) => void) => () => void,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let cleanup = (): void => {};
    const finish = (err: Error | undefined, value?: T): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      cleanup();
      if (err) reject(err);
      else resolve(value as T);
    };
    const onAbort = (): void => finish(new DnsTransportError(`${what}: aborted`));
    const timer = setTimeout(
      () => finish(new DnsTransportError(`${what}: no answer within ${timeoutMs} ms (i/o timeout)`, true)),
      timeoutMs,
    );
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    cleanup = start(
      (value) => finish(undefined, value),
      (err) => finish(err),
    );
  });
}

async function exchangeUdp(
  host: string,
  port: number,
  message: Buffer,
  options: ExchangeOptions,
): Promise<Buffer> {
  const { address, family } = await resolveHost(host);
  const what = `DNS exchange with ${formatNameserver({ kind: 'dns', host, port })} over UDP`;
  const id = message.readUInt16BE(0);
  return withDeadline<Buffer>(what, options, (resolve, reject) => {
    const socket = createSocket(family === 6 ? 'udp6' : 'udp4');
    socket.on('error', (err) => reject(new DnsTransportError(`${what}: ${err.message}`)));
    socket.on('message', (reply, from) => {
      // Datagrams from elsewhere, or with another ID, are not our answer (RFC 5452 §9.1); keep waiting.
      if (from.address !== address || from.port !== port) return;
      if (reply.length < 2 || reply.readUInt16BE(0) !== id) return;
      resolve(reply);
    });
    socket.connect(port, address, () => {
      socket.send(message, (err) => {
        if (err) reject(new DnsTransportError(`${what}: ${err.message}`));
      });
    });
    return () => socket.close();
  });
}

async function exchangeTcp(
  host: string,
  port: number,
  message: Buffer,
  options: ExchangeOptions,
): Promise<Buffer> {
  const { address } = await resolveHost(host);
  const what = `DNS exchange with ${formatNameserver({ kind: 'dns', host, port })} over TCP`;
  return withDeadline<Buffer>(what, options, (resolve, reject) => {
    const socket = connect({ host: address, port });
    let received = Buffer.alloc(0);
    socket.on('error', (err) => reject(new DnsTransportError(`${what}: ${err.message}`)));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(message.length, 0);
      // No half-close: some servers drop a connection whose client has shut its side before the answer.
      socket.write(Buffer.concat([length, message]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        resolve(received.subarray(2, 2 + received.readUInt16BE(0)));
      }
    });
    socket.on('close', () => reject(new DnsTransportError(`${what}: connection closed before a full reply`)));
    return () => socket.destroy();
  });
}

function exchangeHttps(url: string, message: Buffer, options: ExchangeOptions): Promise<Buffer> {
  const what = `DNS-over-HTTPS exchange with ${url}`;
  return withDeadline<Buffer>(what, options, (resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/dns-message',
          accept: 'application/dns-message',
          'content-length': message.length,
        },
        ca: options.ca,
      },
      (response) => {
        const type = response.headers['content-type'];
        if (response.statusCode !== 200) {
          response.resume();
          return reject(
            new DnsTransportError(`dns: server returned HTTP ${response.statusCode} error: ${url}`),
          );
        }
        if (type !== 'application/dns-message') {
          response.resume();
          return reject(
            new DnsTransportError(`dns: unexpected Content-Type ${JSON.stringify(type)} from ${url}`),
          );
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_DOH_RESPONSE_BYTES) {
            reject(
              new DnsTransportError(`dns: ${url} answered with more than ${MAX_DOH_RESPONSE_BYTES} bytes`),
            );
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve(Buffer.concat(chunks)));
        response.on('error', (err) => reject(new DnsTransportError(`${what}: ${err.message}`)));
      },
    );
    request.on('error', (err) => reject(new DnsTransportError(`${what}: ${err.message}`)));
    request.end(message);
    return () => request.destroy();
  });
}

/** Sends `message` to `server` and returns the reply's bytes (an https:// server always uses DoH). */
export function exchange(
  server: Nameserver,
  message: Buffer,
  protocol: Protocol,
  options: ExchangeOptions = {},
): Promise<Buffer> {
  if (server.kind === 'https') return exchangeHttps(server.url, message, options);
  return protocol === 'tcp'
    ? exchangeTcp(server.host, server.port, message, options)
    : exchangeUdp(server.host, server.port, message, options);
}
