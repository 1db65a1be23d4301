/**
 * Test support: the embedded API server as `certkit up` serves it (cert-manager.io and acme.cert-manager.io CRDs installed,
 * cert-manager's validation as admission), plus a CRD of our own whose spec keeps any JSON, and raw HTTPS
 * requests with a deadline, for tests that send malformed input and must see every answer.
 */

import type { ClientRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
// Tests may start the API server; the certificates package itself never imports it.
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.ts';
import { certManagerAdmission, certManagerMutation } from '@certkit/certificates/api/admission';
import { certManagerCrds } from '@certkit/certificates/api/crds';
import { SERVICE_ACCOUNT_ISSUER, testServiceAccountTokens } from './service-account-tokens.ts';

export { SERVICE_ACCOUNT_ISSUER };

/** A custom resource whose spec is free-form (x-kubernetes-preserve-unknown-fields): JSON of any shape. */
export const FREEFORM_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'blobs.fuzz.certkit.dev' },
  spec: {
    group: 'fuzz.certkit.dev',
    scope: 'Namespaced',
    names: { plural: 'blobs', singular: 'blob', kind: 'Blob', listKind: 'BlobList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        },
      },
    ],
  },
};

export const COLLECTIONS = {
  configMaps: '/api/v1/namespaces/default/configmaps',
  secrets: '/api/v1/namespaces/default/secrets',
  namespaces: '/api/v1/namespaces',
  certificates: '/apis/cert-manager.io/v1/namespaces/default/certificates',
  certificateRequests: '/apis/cert-manager.io/v1/namespaces/default/certificaterequests',
  issuers: '/apis/cert-manager.io/v1/namespaces/default/issuers',
  clusterIssuers: '/apis/cert-manager.io/v1/clusterissuers',
  orders: '/apis/acme.cert-manager.io/v1/namespaces/default/orders',
  challenges: '/apis/acme.cert-manager.io/v1/namespaces/default/challenges',
  blobs: '/apis/fuzz.certkit.dev/v1/namespaces/default/blobs',
  events: '/api/v1/namespaces/default/events',
  leases: '/apis/coordination.k8s.io/v1/namespaces/default/leases',
  crds: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
};

/** Starts the server, installs the CRDs and waits until every custom resource is served. */
export async function startCertManagerServer(
  options: Omit<TestServerOptions, 'admission'> = {},
): Promise<TestServer> {
  const server = await startTestServer({
    serviceAccountTokens: testServiceAccountTokens(),
    ...options,
    admission: certManagerAdmission,
    admissionMutation: certManagerMutation,
  });
  for (const crd of [...certManagerCrds(), FREEFORM_CRD]) {
    const res = await server.fetch('POST', COLLECTIONS.crds, { body: crd });
    if (res.status !== 201) throw new Error(`installing ${crd.metadata?.name}: ${res.text}`);
  }
  for (const path of [
    COLLECTIONS.certificates,
    COLLECTIONS.clusterIssuers,
    COLLECTIONS.challenges,
    COLLECTIONS.blobs,
  ]) {
    const deadline = Date.now() + 15_000;
    while ((await server.fetch('GET', path)).status !== 200) {
      if (Date.now() > deadline) throw new Error(`${path} not served within 15 s`);
      await sleep(20);
    }
  }
  return server;
}

export interface RawRequest {
  method: string;
  /**
   * Path and query, sent byte for byte as they are (not normalised as a URL would be: `..`, `//` and
   * malformed escapes reach the server). Characters above U+00FF are sent as their UTF-8 bytes.
   */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Stop reading after the headers and this long (watches), rather than at the end of the body. */
  readForMs?: number;
  /** Send no Authorization header of the test server's own (one in `headers` is still sent). */
  anonymous?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One request on its own connection, failing if no complete answer comes within `timeoutMs`: a server that
 * hangs on some input fails the test instead of stalling it.
 */
export function rawRequest(
  server: TestServer,
  req: RawRequest,
  timeoutMs = 10_000,
  /** A keep-alive agent of the caller's, to send a later request on the same connection; else one of its own. */
  sharedAgent?: Agent,
): Promise<RawResponse> {
  const headers: Record<string, string> = {
    ...(req.anonymous ? {} : { Authorization: `Bearer ${server.token}` }),
    ...req.headers,
  };
  // A chunked body carries no length; any other body gets one (Node sends DELETE bodies unframed otherwise).
  const chunked = Object.entries(headers).some(
    ([name, value]) => name.toLowerCase() === 'transfer-encoding' && /chunked/i.test(value),
  );
  if (req.body !== undefined && !chunked) headers['Content-Length'] = String(Buffer.byteLength(req.body));
  const { hostname, port } = new URL(server.url);
  // Node writes the request line in latin1: UTF-8 bytes as latin1 characters go out unchanged.
  const path = /[^\x00-\xff]/.test(req.path) ? Buffer.from(req.path, 'utf8').toString('latin1') : req.path;
  const agent = sharedAgent ?? new Agent({ ca: server.caCertPem, keepAlive: false });
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const done = (result: RawResponse | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!sharedAgent) agent.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(() => {
      outgoing?.destroy();
      done(new Error(`no complete answer within ${timeoutMs} ms to ${req.method} ${req.path}`));
    }, timeoutMs);
    let outgoing: ClientRequest | undefined;
    try {
      // Node's client refuses some requests itself (a path with controls or spaces, a bad header value).
      outgoing = request({ hostname, port, path, method: req.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        const finish = () =>
          done({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', finish);
        res.on('error', (err) => done(err));
        if (req.readForMs !== undefined) {
          setTimeout(() => {
            res.removeAllListeners('end');
            res.destroy();
            finish();
          }, req.readForMs);
        }
      });
    } catch (err) {
      done(err as Error);
      return;
    }
    outgoing.on('error', (err: Error & { rawPacket?: unknown }) => {
      // A request the server's HTTP parser refuses is answered as Go answers it, with a body whatever the
      // method: the client's parser, expecting none after a HEAD, fails on it. The status line is in the bytes.
      const status = Buffer.isBuffer(err.rawPacket)
        ? /^HTTP\/1\.1 (\d{3}) /.exec(err.rawPacket.toString('latin1'))
        : null;
      if (req.method === 'HEAD' && status) {
        done({ status: Number(status[1]), headers: {}, text: (err.rawPacket as Buffer).toString('utf8') });
      } else {
        done(err);
      }
    });
    outgoing.end(req.body);
  });
}
