import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '@certkit/apimachinery';
import { decodeProtobufObject } from './protobuf.ts';

/**
 * The protobuf tables of Services, Deployments, Ingresses and CertificateSigningRequests (what kubectl's typed
 * commands send): IntOrString and Quantity as JSON writes them, Ingress rules' embedded value inlined, and a
 * PodSpec field outside the table refused rather than dropped.
 */

function varint(value: number): Buffer {
  const out: number[] = [];
  let v = value;
  do {
    const byte = v & 0x7f;
    v = Math.floor(v / 128);
    out.push(v > 0 ? byte | 0x80 : byte);
  } while (v > 0);
  return Buffer.from(out);
}
const int = (field: number, value: number) => Buffer.concat([varint(field * 8), varint(value)]);
const bytes = (field: number, value: string | Buffer) => {
  const payload = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint(field * 8 + 2), varint(payload.length), payload]);
};
const msg = (field: number, ...parts: Buffer[]) => bytes(field, Buffer.concat(parts));
const entry = (field: number, key: string, value: Buffer) => msg(field, bytes(1, key), bytes(2, value));

function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from('k8s\0', 'latin1'),
    msg(1, bytes(1, apiVersion), bytes(2, kind)),
    bytes(2, raw),
  ]);
}

const intOrString = (field: number, value: number | string) =>
  typeof value === 'number'
    ? msg(field, int(1, 0), int(2, value), bytes(3, ''))
    : msg(field, int(1, 1), int(2, 0), bytes(3, value));

describe('protobuf bodies of workload kinds', () => {
  it('decodes a Service with an int and a named targetPort', () => {
    const raw = Buffer.concat([
      msg(1, bytes(1, 'web')),
      msg(
        2,
        msg(1, bytes(1, 'http'), bytes(2, 'TCP'), int(3, 80), intOrString(4, 8080), int(5, 0)),
        msg(1, bytes(1, 'metrics'), bytes(2, 'TCP'), int(3, 9402), intOrString(4, 'metrics'), int(5, 0)),
        entry(2, 'app', Buffer.from('web')),
        bytes(4, 'ClusterIP'),
      ),
      msg(3, msg(1)),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Service', raw)), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
          { name: 'metrics', protocol: 'TCP', port: 9402, targetPort: 'metrics' },
        ],
        selector: { app: 'web' },
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    });
  });

  it('decodes a Deployment, replicas 0 kept and quantities as strings, and refuses PodSpec fields it lacks', () => {
    const container = msg(
      2,
      bytes(1, 'nginx'),
      bytes(2, 'nginx:1.27'),
      msg(8, entry(1, 'cpu', bytes(1, '500m'))),
    );
    const template = (...podSpec: Buffer[]) =>
      msg(3, msg(1, entry(11, 'app', Buffer.from('web'))), msg(2, ...podSpec));
    const deployment = (...podSpec: Buffer[]) =>
      envelope(
        'apps/v1',
        'Deployment',
        Buffer.concat([
          msg(1, bytes(1, 'web')),
          msg(2, int(1, 0), msg(2, entry(1, 'app', Buffer.from('web'))), template(...podSpec), msg(4)),
        ]),
      );
    const decoded = decodeProtobufObject(deployment(container)) as any;
    assert.equal(decoded.spec.replicas, 0);
    assert.deepEqual(decoded.spec.selector, { matchLabels: { app: 'web' } });
    assert.deepEqual(decoded.spec.template.spec.containers, [
      { name: 'nginx', image: 'nginx:1.27', resources: { limits: { cpu: '500m' } } },
    ]);
    // volumes (field 1) are not in the table: 415, naming the message, not a Deployment without its volumes.
    assert.throws(
      () => decodeProtobufObject(deployment(container, msg(1, bytes(1, 'data')))),
      (err: unknown) =>
        err instanceof StatusError &&
        err.code === 415 &&
        /field 1 of PodSpec is not decoded from application\/vnd\.kubernetes\.protobuf here; send the object as application\/json/.test(
          err.message,
        ),
    );
  });

  it('decodes an Ingress with its rules’ http inlined', () => {
    const backend = msg(2, msg(4, bytes(1, 'web'), msg(2, bytes(1, ''), int(2, 80))));
    const raw = Buffer.concat([
      msg(1, bytes(1, 'shop')),
      msg(
        2,
        bytes(4, 'nginx'),
        msg(
          3,
          bytes(1, 'shop.example.com'),
          msg(2, msg(1, msg(1, bytes(1, '/'), bytes(3, 'Prefix'), backend))),
        ),
      ),
    ]);
    const decoded = decodeProtobufObject(envelope('networking.k8s.io/v1', 'Ingress', raw)) as any;
    assert.deepEqual(decoded.spec, {
      ingressClassName: 'nginx',
      rules: [
        {
          host: 'shop.example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
            ],
          },
        },
      ],
    });
  });
});
