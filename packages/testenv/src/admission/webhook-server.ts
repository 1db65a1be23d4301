import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestCa } from '../pki/auth-certs.ts';

/**
 * An admission webhook for tests: a real HTTPS server on a free loopback port, with a serving certificate from
 * a CA of its own (its `caBundle` is what a webhook configuration carries), that answers AdmissionReviews the
 * way the test's handler decides. It records every review it receives.
 */

/** The `request` of an AdmissionReview as the API server sent it. */
export interface ReceivedReview {
  apiVersion: string;
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    subResource?: string;
    name?: string;
    namespace?: string;
    operation: string;
    userInfo: { username: string; groups?: string[] };
    object: any;
    oldObject: any;
    dryRun: boolean;
    options: any;
  };
  /** The request's path and query (`/mutate?timeout=10s`). */
  path: string;
}

/** What the handler answers: a response (uid and apiVersion filled in), or a raw HTTP answer. */
export type WebhookAnswer =
  | { allowed: boolean; status?: Record<string, unknown>; patch?: unknown[]; warnings?: string[] }
  | { raw: { statusCode: number; body: string; headers?: Record<string, string> } }
  | { hang: true };

export interface TestWebhookServer {
  /** `https://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** The CA's certificate, base64 of PEM, as `clientConfig.caBundle` takes it. */
  caBundle: string;
  reviews: ReceivedReview[];
  /** Serves with another certificate from now on (new connections), as a webhook does when its Secret rotates. */
  useServing(serving: ServingKeyPair): void;
  close(): Promise<void>;
}

/** A serving certificate (chain) and its key, PEM. */
export interface ServingKeyPair {
  certPem: string;
  keyPem: string;
}

export interface WebhookServerOptions {
  /** Names the serving certificate holds besides 127.0.0.1 (e.g. `svc.ns.svc` for a service reference). */
  dnsNames?: string[];
  /**
   * Serve with this certificate instead of one from the server's own CA (then `caBundle` is the own CA's, which
   * does not verify it): what a test of a CA issued elsewhere, e.g. by the controller, passes.
   */
  serving?: ServingKeyPair;
}

export async function startWebhookServer(
  handler: (review: ReceivedReview) => WebhookAnswer | Promise<WebhookAnswer>,
  options: WebhookServerOptions = {},
): Promise<TestWebhookServer> {
  const ca = await createTestCa('webhook-test-ca');
  const serving =
    options.serving ??
    (await ca.issue({
      commonName: 'webhook',
      usages: ['serverAuth'],
      dnsNames: options.dnsNames ?? [],
      ipAddresses: ['127.0.0.1'],
    }));
  const reviews: ReceivedReview[] = [];
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedReview;
        review.path = req.url ?? '';
        reviews.push(review);
        const answer = await handler(review);
        if ('hang' in answer) return;
        if ('raw' in answer) {
          res.writeHead(answer.raw.statusCode, { 'Content-Type': 'application/json', ...answer.raw.headers });
          res.end(answer.raw.body);
          return;
        }
        const response: Record<string, unknown> = { uid: review.request.uid, allowed: answer.allowed };
        if (answer.status) response.status = answer.status;
        if (answer.warnings) response.warnings = answer.warnings;
        if (answer.patch) {
          response.patchType = 'JSONPatch';
          response.patch = Buffer.from(JSON.stringify(answer.patch)).toString('base64');
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
      })().catch((err: unknown) => res.destroy(err as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    reviews,
    useServing: ({ certPem, keyPem }) => server.setSecureContext({ cert: certPem, key: keyPem }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
