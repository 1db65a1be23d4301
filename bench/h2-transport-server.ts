import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  constants,
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Stream,
} from 'node:http2';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseTlsConnectionsInJs } from '@certkit/apiserver/http/tls-parse-in-js';
import { ensureServingCertificates } from '@certkit/apiserver/security/certificates';

/**
 * One transport alone, for bench:h2-transport: a server that does nothing but HTTP, with the API server's TLS
 * certificates, in one of four ways (`--protocol`):
 * - `h1`: node:https, Node's native parser (bench/bare-https-server.ts's way);
 * - `h1-js`: node:https with the TLS connections parsed in JavaScript, as the API server does (ADR 1831);
 * - `h2-compat`: node:http2's secure server through its request/response API with HTTP/1.1 allowed by ALPN,
 *   the way the API server's handler (written for node:http's req/res) would serve HTTP/2;
 * - `h2-stream`: node:http2's stream API, what HTTP/2 costs without the compatibility objects.
 * Every POST is read to its end and answered 201 with a fixed ~2 KB JSON object; `GET /watch?events=N&burst=B`
 * streams N ~2 KB watch events, B written per turn (corked together, as http/watch.ts does), then ends;
 * `GET /cpu` answers the process's CPU so far (process.cpuUsage(), all threads, µs), which the bench reads
 * before and after each measurement. Started as bench/lib.ts's startServerProcess starts the API server
 * (`<command> --data-dir DIR --port 0 --protocol P`, a token file, "listening on URL").
 */

const { values } = parseArgs({
  allowPositionals: true,
  options: { 'data-dir': { type: 'string' }, port: { type: 'string' }, protocol: { type: 'string' } },
});
const protocol = values.protocol ?? 'h1';
const dir = values['data-dir']!;
const tls = await ensureServingCertificates(dir, ['127.0.0.1']);
await writeFile(join(dir, 'token'), 'bare\n');

/** A Secret-sized object, as a create or update returns it: ~2 KB of JSON. */
const ANSWER = JSON.stringify({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: {
    name: 'example-com',
    namespace: 'bench',
    uid: '0b6a3c1e-8a53-4f3e-9d0c-2f1e5b7a9c41',
    resourceVersion: '412',
    creationTimestamp: '2026-11-26T20:00:00Z',
    labels: { 'controller.cert-manager.io/fao': 'true' },
    annotations: { 'cert-manager.io/certificate-name': 'example-com', 'cert-manager.io/issuer-name': 'ca' },
  },
  data: { 'tls.crt': 'M'.repeat(1500) },
});

/** A watch event line of ~2 KB: what a Certificate's status update sends every watcher. */
const EVENT = `${JSON.stringify({
  type: 'MODIFIED',
  object: {
    kind: 'Certificate',
    apiVersion: 'cert-manager.io/v1',
    metadata: { name: 'example-com', namespace: 'bench', resourceVersion: '413' },
    spec: { secretName: 'example-com-tls', dnsNames: ['example.com'], issuerRef: { name: 'ca' } },
    status: { conditions: [{ type: 'Ready', status: 'True', message: 'x'.repeat(1700) }] },
  },
})}\n`;

const JSON_HEADERS = ['Content-Type', 'application/json', 'Cache-Control', 'no-cache, private'];

/** The watch's parameters from the query: events to send, and how many per turn. */
function watchParams(url: string): { events: number; burst: number } {
  const query = new URLSearchParams(url.slice(url.indexOf('?') + 1));
  return { events: Number(query.get('events') ?? 1000), burst: Number(query.get('burst') ?? 1) };
}

type Res = ServerResponse | Http2ServerResponse;

/** Writes `events` events, `burst` per turn, waiting for 'drain' when the stream says so; then ends. */
function streamEvents(
  write: (data: string) => boolean,
  cork: () => void,
  uncork: () => void,
  onDrain: (resume: () => void) => void,
  end: () => void,
  { events, burst }: { events: number; burst: number },
): void {
  let sent = 0;
  const turn = () => {
    let more = true;
    cork();
    for (let i = 0; i < burst && sent < events; i++, sent++) more = write(EVENT);
    uncork();
    if (sent >= events) end();
    else if (more) setImmediate(turn);
    else onDrain(turn);
  };
  turn();
}

/** The request/response handler of h1, h1-js and h2-compat. */
function handle(req: IncomingMessage | Http2ServerRequest, res: Res): void {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url.startsWith('/watch')) {
    (res as ServerResponse).writeHead(200, JSON_HEADERS);
    streamEvents(
      (data) => (res as ServerResponse).write(data),
      () => (res as ServerResponse).cork?.(),
      () => (res as ServerResponse).uncork?.(),
      (resume) => res.once('drain', resume),
      () => res.end(),
      watchParams(url),
    );
    return;
  }
  req.on('data', () => {});
  req.on('end', () => {
    const body = url === '/cpu' ? cpuJson() : ANSWER;
    (res as ServerResponse).writeHead(req.method === 'POST' ? 201 : 200, [
      ...JSON_HEADERS,
      'Content-Length',
      String(Buffer.byteLength(body)),
    ]);
    res.end(body);
  });
}

function cpuJson(): string {
  const { user, system } = process.cpuUsage();
  return JSON.stringify({ cpuUs: user + system });
}

/** The h2-stream handler: the same answers on node:http2's stream API. */
function handleStream(
  stream: ServerHttp2Stream,
  headers: Record<string, string | string[] | undefined>,
): void {
  const path = String(headers[constants.HTTP2_HEADER_PATH] ?? '/');
  const method = headers[constants.HTTP2_HEADER_METHOD];
  if (method === 'GET' && path.startsWith('/watch')) {
    stream.respond({
      ':status': 200,
      'content-type': 'application/json',
      'cache-control': 'no-cache, private',
    });
    streamEvents(
      (data) => stream.write(data),
      () => stream.cork(),
      () => stream.uncork(),
      (resume) => stream.once('drain', resume),
      () => stream.end(),
      watchParams(path),
    );
    return;
  }
  stream.on('data', () => {});
  stream.on('end', () => {
    const body = path === '/cpu' ? cpuJson() : ANSWER;
    stream.respond({
      ':status': method === 'POST' ? 201 : 200,
      'content-type': 'application/json',
      'cache-control': 'no-cache, private',
      'content-length': Buffer.byteLength(body),
    });
    stream.end(body);
  });
}

const options = { cert: tls.certPem, key: tls.keyPem };
let server;
if (protocol === 'h1' || protocol === 'h1-js') {
  server = createServer(options, handle);
  if (protocol === 'h1-js') parseTlsConnectionsInJs(server);
} else if (protocol === 'h2-compat') {
  server = createSecureServer({ ...options, allowHTTP1: true }, handle);
} else if (protocol === 'h2-stream') {
  server = createSecureServer(options);
  server.on('stream', handleStream);
} else {
  throw new Error(`unknown --protocol ${protocol}`);
}
server.listen(Number(values.port ?? 0), '127.0.0.1');
await once(server, 'listening');
process.stdout.write(`listening on https://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => process.exit(0));
