/**
 * Calling a webhook: one HTTPS POST of JSON (HTTP/1.1, as kube-apiserver's webhook client), trusting the
 * system roots plus the webhook's caBundle, with a deadline. Errors are worded as Go's net/http client words
 * them (`Post "URL": …`), since that text reaches users inside kube-apiserver's "failed calling webhook"
 * message. node:https rather than undici: a per-call TLS server name and dial address (a service is dialled at
 * an endpoint's address but verified as `<name>.<namespace>.svc`) are plain request options there.
 */

import { Agent, request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { caBundleCertificates } from './configuration-validation.ts';
import { MAX_BODY_BYTES } from '../http/respond.ts';

/**
 * The most a webhook's answer may hold. kube-apiserver's webhook client (client-go's rest client) reads the
 * answer whole, without a bound; this server bounds it so that a webhook cannot make it buffer without end.
 * An answer carries at most a patch, which may be as large as the largest request body, and which arrives
 * base64-encoded (4/3 of its size) within the review: twice the request body limit leaves room for both.
 */
export const MAX_WEBHOOK_RESPONSE_BYTES = 2 * MAX_BODY_BYTES;

/** Where to send a review: the URL it is posted to, and where to dial when that differs (a service). */
export interface WebhookTarget {
  url: URL;
  /** The endpoint to connect to; the URL's host when absent. */
  dial?: { host: string; port: number };
  caBundle?: string;
}

export interface WebhookReply {
  statusCode: number;
  body: string;
}

/** A call that did not produce an answer to judge: the failurePolicy decides what it means. */
export class WebhookCallError extends Error {}

/** A connection pool per trust set, so that a webhook's calls reuse connections (kube's client caches too). */
export class WebhookClient {
  private readonly agents = new Map<string, Agent>();

  private agentFor(caBundle: string | undefined): Agent {
    const key = caBundle ?? '';
    let agent = this.agents.get(key);
    if (!agent) {
      const ca = caBundle ? [...rootCertificates, ...caBundleCertificates(caBundle)] : undefined;
      agent = new Agent({ keepAlive: true, ca });
      this.agents.set(key, agent);
    }
    return agent;
  }

  async post(target: WebhookTarget, body: string, timeoutMs: number): Promise<WebhookReply> {
    const { url } = target;
    const shown = `Post "${url.href}"`;
    let agent: Agent;
    try {
      agent = this.agentFor(target.caBundle);
    } catch (err) {
      throw new WebhookCallError(`${shown}: could not read caBundle: ${(err as Error).message}`);
    }
    const port = url.port ? Number(url.port) : 443;
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return new Promise<WebhookReply>((resolve, reject) => {
      const req = request(
        {
          agent,
          method: 'POST',
          host: target.dial?.host ?? hostname,
          port: target.dial?.port ?? port,
          servername: isIp(hostname) ? undefined : hostname,
          path: `${url.pathname}${url.search}`,
          headers: {
            Host: url.host,
            'Content-Type': 'application/json',
            Accept: 'application/json, */*',
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const tooLarge = () =>
            fail(Object.assign(new Error('response too large'), { code: 'RESPONSE_TOO_LARGE' }));
          if (Number(res.headers['content-length'] ?? 0) > MAX_WEBHOOK_RESPONSE_BYTES) return tooLarge();
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            // Read no further: the call fails now, and failurePolicy decides, as for any failed call.
            if (size > MAX_WEBHOOK_RESPONSE_BYTES) return tooLarge();
            chunks.push(c);
          });
          res.on('end', () => {
            if (done) return;
            done = true;
            clearTimeout(timer);
            resolve({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', (err) => fail(err));
        },
      );
      let done = false;
      const fail = (err: Error & { code?: string }) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.destroy();
        reject(new WebhookCallError(`${shown}: ${describeError(err, target, hostname, port)}`));
      };
      const timer = setTimeout(
        () => fail(Object.assign(new Error('deadline'), { code: 'DEADLINE' })),
        timeoutMs,
      );
      req.on('error', fail);
      req.end(body);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

function isIp(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

/** Go's wording of the common failures, so that users see what kube-apiserver would show them. */
function describeError(
  err: Error & { code?: string },
  target: WebhookTarget,
  host: string,
  port: number,
): string {
  const dialed = target.dial ? `${target.dial.host}:${target.dial.port}` : `${host}:${port}`;
  switch (err.code) {
    case 'DEADLINE':
      return 'context deadline exceeded';
    case 'RESPONSE_TOO_LARGE':
      return `the response body is larger than the limit of ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`;
    case 'ECONNREFUSED':
      return `dial tcp ${dialed}: connect: connection refused`;
    case 'ECONNRESET':
      return `read tcp ${dialed}: read: connection reset by peer`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${host}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: ${err.message}`;
    default:
      return err.message;
  }
}
