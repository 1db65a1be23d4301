import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureServingCertificates } from '@certkit/apiserver/security/certificates';

/**
 * Node's HTTPS alone, for bench:apiserver-request-cost --bare: a node:https server, with the API server's TLS
 * certificates and its way of answering (headers as a flat list, one `end` with the body), that answers every
 * request with the JSON of a Namespace as the API server returns it. It reads each request's body to its end
 * and does nothing else: what a GET costs here is the floor the API server's own work sits on. Started as
 * bench/lib.ts's startServerProcess starts the API server (`<command> --data-dir DIR --port 0`, a token file,
 * "listening on URL").
 */

const { values } = parseArgs({
  allowPositionals: true,
  options: { 'data-dir': { type: 'string' }, port: { type: 'string' } },
});
const dir = values['data-dir']!;
const tls = await ensureServingCertificates(dir, ['127.0.0.1']);
await writeFile(join(dir, 'token'), 'bare\n');

const NAMESPACE = JSON.stringify({
  kind: 'Namespace',
  apiVersion: 'v1',
  metadata: {
    name: 'bench',
    uid: '0b6a3c1e-8a53-4f3e-9d0c-2f1e5b7a9c41',
    resourceVersion: '412',
    creationTimestamp: '2026-11-26T20:00:00Z',
    labels: { 'kubernetes.io/metadata.name': 'bench' },
    managedFields: [
      {
        manager: 'node',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-26T20:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } },
      },
    ],
  },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
});

const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, [
      'Content-Type',
      'application/json',
      'Content-Length',
      String(Buffer.byteLength(NAMESPACE)),
      'Cache-Control',
      'no-cache, private',
    ]);
    res.end(NAMESPACE);
  });
});
server.listen(Number(values.port ?? 0), '127.0.0.1');
await once(server, 'listening');
process.stdout.write(`listening on https://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
