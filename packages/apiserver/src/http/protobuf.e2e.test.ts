import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { StatusError } from '@certkit/apimachinery';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE, parseObjectBody } from './protobuf.ts';

// --- A tiny protobuf writer -----------------------------------------------------------------------------------

function varint(value: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return Buffer.from(out);
}

const tag = (field: number, wireType: number) => varint(field * 8 + wireType);
/** A varint field (int32, int64, bool). */
const int = (field: number, value: number | bigint | boolean) =>
  Buffer.concat([tag(field, 0), varint(typeof value === 'boolean' ? (value ? 1 : 0) : value)]);
/** A length-delimited field: string, bytes or an embedded message. */
const bytes = (field: number, value: string | Buffer) => {
  const payload = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([tag(field, 2), varint(payload.length), payload]);
};
const msg = (field: number, ...parts: Buffer[]) => bytes(field, Buffer.concat(parts));
const entry = (field: number, key: string, value: string | Buffer) =>
  msg(field, bytes(1, key), bytes(2, value));
const fixed64 = (field: number) => Buffer.concat([tag(field, 1), Buffer.alloc(8, 7)]);
const fixed32 = (field: number) => Buffer.concat([tag(field, 5), Buffer.alloc(4, 7)]);
const group = (field: number, ...parts: Buffer[]) => Buffer.concat([tag(field, 3), ...parts, tag(field, 4)]);

const MAGIC = Buffer.from('k8s\0', 'latin1');

/** magic + runtime.Unknown{typeMeta{apiVersion=1, kind=2}=1, raw=2, contentEncoding=3, contentType=4}. */
function envelope(apiVersion: string, kind: string, raw: Buffer, ...extra: Buffer[]): Buffer {
  return Buffer.concat([
    MAGIC,
    msg(1, bytes(1, apiVersion), bytes(2, kind)),
    bytes(2, raw),
    bytes(3, ''),
    bytes(4, ''),
    ...extra,
  ]);
}

const JAN_1_2024 = 1704067200;

/** ObjectMeta as Go writes it: every non-pointer field, zero or not. */
function objectMeta(name: string, namespace: string, ...extra: Buffer[]): Buffer {
  return Buffer.concat([
    bytes(1, name),
    bytes(2, ''),
    bytes(3, namespace),
    bytes(4, ''),
    bytes(5, ''),
    bytes(6, ''),
    int(7, 0),
    msg(8), // zero creationTimestamp
    ...extra,
  ]);
}

function assertStatus(fn: () => unknown, code: number, pattern?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof StatusError, `expected a StatusError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

// --- Decoding ------------------------------------------------------------------------------------------------

describe('decodeProtobufObject', () => {
  test('Secret with metadata maps, owner references, finalizers, timestamps, data bytes, type, immutable', () => {
    const meta = Buffer.concat([
      bytes(1, 's1'),
      bytes(2, ''),
      bytes(3, 'ns1'),
      bytes(4, ''),
      bytes(5, ''),
      bytes(6, ''),
      int(7, 0),
      msg(8, int(1, JAN_1_2024), int(2, 500_000_000)), // Go keeps whole seconds only
      entry(11, 'app', 'web'),
      entry(11, 'tier', 'backend'),
      entry(12, 'note', 'hello'),
      msg(
        13,
        bytes(1, 'Deployment'),
        bytes(3, 'd1'),
        bytes(4, 'uid-1'),
        bytes(5, 'apps/v1'),
        int(6, true),
        int(7, false),
      ),
      msg(13, bytes(1, 'ConfigMap'), bytes(3, 'c1'), bytes(4, 'uid-2'), bytes(5, 'v1')),
      bytes(14, 'example.com/a'),
      bytes(14, 'example.com/b'),
    ]);
    const raw = Buffer.concat([
      msg(1, meta),
      entry(2, 'password', 's3cret'),
      entry(2, 'bin', Buffer.from([0, 1, 254, 255])),
      bytes(3, 'Opaque'),
      int(5, true),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Secret', raw)), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 's1',
        namespace: 'ns1',
        creationTimestamp: '2024-01-01T00:00:00Z',
        labels: { app: 'web', tier: 'backend' },
        annotations: { note: 'hello' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'd1',
            uid: 'uid-1',
            controller: true,
            blockOwnerDeletion: false,
          },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'c1', uid: 'uid-2' },
        ],
        finalizers: ['example.com/a', 'example.com/b'],
      },
      immutable: true,
      data: { password: Buffer.from('s3cret').toString('base64'), bin: 'AAH+/w==' },
      type: 'Opaque',
    });
  });

  test('Secret stringData, deletion fields, generation and large and negative int64', () => {
    const meta = objectMeta(
      '',
      'ns1',
      msg(9, int(1, JAN_1_2024 + 61)),
      int(10, 0), // a pointer: zero is kept
      bytes(2, 'gen-'), // generateName written again: the last one wins
    );
    const raw = Buffer.concat([msg(1, meta, int(7, 2 ** 50)), entry(4, 'user', 'admin'), bytes(3, '')]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Secret', raw)), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        generateName: 'gen-',
        namespace: 'ns1',
        generation: 2 ** 50,
        deletionTimestamp: '2024-01-01T00:01:01Z',
        deletionGracePeriodSeconds: 0,
      },
      stringData: { user: 'admin' },
    });
    const negative = decodeProtobufObject(envelope('v1', 'Secret', msg(1, int(10, -1))));
    assert.deepEqual(negative.metadata, { deletionGracePeriodSeconds: -1 });
  });

  test('an int64 beyond ±(2^53 - 1) is refused with its field path, not rounded (ADR 0403)', () => {
    for (const [value, text] of [
      [2n ** 53n + 1n, '9007199254740993'],
      [-(2n ** 63n), '-9223372036854775808'],
    ] as const) {
      assertStatus(
        () => decodeProtobufObject(envelope('v1', 'Secret', msg(1, int(7, value)))),
        400,
        new RegExp(`^metadata\\.generation: Invalid value: ${text}: must be within ±\\(2\\^53 - 1\\)`),
      );
    }
    const safe = decodeProtobufObject(envelope('v1', 'Secret', msg(1, int(7, 2 ** 53 - 1))));
    assert.deepEqual(safe.metadata, { generation: 2 ** 53 - 1 });
  });

  test('managedFields with FieldsV1 JSON', () => {
    const fields = '{"f:data":{"f:a":{}}}';
    const managed = msg(
      17,
      bytes(1, 'kubectl-create'),
      bytes(2, 'Update'),
      bytes(3, 'v1'),
      msg(4, int(1, JAN_1_2024)),
      bytes(6, 'FieldsV1'),
      msg(7, bytes(1, fields)),
      bytes(8, ''),
    );
    const decoded = decodeProtobufObject(
      envelope('v1', 'ConfigMap', msg(1, objectMeta('c1', 'ns1', managed))),
    );
    assert.deepEqual(decoded.metadata, {
      name: 'c1',
      namespace: 'ns1',
      managedFields: [
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2024-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { 'f:a': {} } },
        },
      ],
    });
    const broken = msg(1, objectMeta('c1', 'ns1', msg(17, msg(7, bytes(1, '{nope')))));
    assertStatus(() => decodeProtobufObject(envelope('v1', 'ConfigMap', broken)), 400, /fieldsV1/);
  });

  test('ConfigMap with data, binaryData and a false immutable (a pointer, so kept)', () => {
    const raw = Buffer.concat([
      msg(1, objectMeta('c1', 'ns1')),
      entry(2, 'a', 'b'),
      entry(2, 'empty', ''),
      entry(3, 'blob', Buffer.from('\x00\x10binary')),
      int(4, false),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'ConfigMap', raw)), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c1', namespace: 'ns1' },
      data: { a: 'b', empty: '' },
      binaryData: { blob: Buffer.from('\x00\x10binary').toString('base64') },
      immutable: false,
    });
  });

  test('Namespace with spec and status', () => {
    const raw = Buffer.concat([
      msg(1, objectMeta('pb', '')),
      msg(2, bytes(1, 'kubernetes')),
      msg(
        3,
        bytes(1, 'Terminating'),
        msg(
          2,
          bytes(1, 'NamespaceDeletionContentFailure'),
          bytes(2, 'False'),
          msg(4, int(1, JAN_1_2024)),
          bytes(5, ''),
          bytes(6, ''),
        ),
      ),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Namespace', raw)), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'pb' },
      spec: { finalizers: ['kubernetes'] },
      status: {
        phase: 'Terminating',
        conditions: [
          {
            type: 'NamespaceDeletionContentFailure',
            status: 'False',
            lastTransitionTime: '2024-01-01T00:00:00Z',
          },
        ],
      },
    });
    // Empty spec and status are written by Go and read as {} (as kube-apiserver's JSON has them).
    const bare = decodeProtobufObject(
      envelope('v1', 'Namespace', Buffer.concat([msg(1, objectMeta('x', '')), msg(2), msg(3)])),
    );
    assert.deepEqual(bare, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'x' },
      spec: {},
      status: {},
    });
  });

  test('ServiceAccount with secrets and imagePullSecrets', () => {
    const raw = Buffer.concat([
      msg(1, objectMeta('sa1', 'ns1')),
      msg(
        2,
        bytes(1, 'Secret'),
        bytes(2, 'ns1'),
        bytes(3, 'tok'),
        bytes(4, ''),
        bytes(5, 'v1'),
        bytes(6, ''),
        bytes(7, ''),
      ),
      msg(3, bytes(1, 'registry')),
      int(4, false),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'ServiceAccount', raw)), {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'sa1', namespace: 'ns1' },
      secrets: [{ kind: 'Secret', namespace: 'ns1', name: 'tok', apiVersion: 'v1' }],
      imagePullSecrets: [{ name: 'registry' }],
      automountServiceAccountToken: false,
    });
  });

  test('Lease with MicroTime renewTime and acquireTime (microsecond precision)', () => {
    const raw = Buffer.concat([
      msg(1, objectMeta('leader', 'kube-system')),
      msg(
        2,
        bytes(1, 'pod-a'),
        int(2, 15),
        msg(3, int(1, JAN_1_2024), int(2, 0)),
        msg(4, int(1, JAN_1_2024 + 3600), int(2, 123_456_789)), // truncated to .123456
        int(5, 0), // a pointer: zero is kept
      ),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('coordination.k8s.io/v1', 'Lease', raw)), {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'leader', namespace: 'kube-system' },
      spec: {
        holderIdentity: 'pod-a',
        leaseDurationSeconds: 15,
        acquireTime: '2024-01-01T00:00:00.000000Z',
        renewTime: '2024-01-01T01:00:00.123456Z',
        leaseTransitions: 0,
      },
    });
  });

  test('Event with references, source, Time, MicroTime, series', () => {
    const involved = msg(
      2,
      bytes(1, 'Pod'),
      bytes(2, 'ns1'),
      bytes(3, 'p1'),
      bytes(4, 'uid-p'),
      bytes(5, 'v1'),
      bytes(6, '42'),
      bytes(7, 'spec.containers{app}'),
    );
    const raw = Buffer.concat([
      msg(1, objectMeta('p1.17a', 'ns1')),
      involved,
      bytes(3, 'Started'),
      bytes(4, 'Started container app'),
      msg(5, bytes(1, 'kubelet'), bytes(2, 'node-1')),
      msg(6, int(1, JAN_1_2024)),
      msg(7, int(1, JAN_1_2024 + 10), int(2, 999_999_999)),
      int(8, 3),
      bytes(9, 'Normal'),
      msg(10, int(1, JAN_1_2024), int(2, 5000)),
      msg(11, int(1, 2), msg(2, int(1, JAN_1_2024 + 5))),
      bytes(12, ''),
      msg(13, bytes(1, 'Node'), bytes(3, 'node-1')),
      bytes(14, ''), // no omitempty: kept
      bytes(15, 'node-1'),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Event', raw)), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'p1.17a', namespace: 'ns1' },
      involvedObject: {
        kind: 'Pod',
        namespace: 'ns1',
        name: 'p1',
        uid: 'uid-p',
        apiVersion: 'v1',
        resourceVersion: '42',
        fieldPath: 'spec.containers{app}',
      },
      reason: 'Started',
      message: 'Started container app',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-01-01T00:00:00Z',
      lastTimestamp: '2024-01-01T00:00:10Z',
      count: 3,
      type: 'Normal',
      eventTime: '2024-01-01T00:00:00.000005Z',
      series: { count: 2, lastObservedTime: '2024-01-01T00:00:05.000000Z' },
      related: { kind: 'Node', name: 'node-1' },
      reportingComponent: '',
      reportingInstance: 'node-1',
    });
  });

  test('DeleteOptions under any apiVersion', () => {
    const raw = Buffer.concat([
      int(1, 0),
      msg(2, bytes(1, 'uid-1'), bytes(2, '7')),
      bytes(4, 'Foreground'),
      bytes(5, 'All'),
    ]);
    for (const apiVersion of ['v1', 'meta.k8s.io/v1', 'coordination.k8s.io/v1']) {
      assert.deepEqual(decodeProtobufObject(envelope(apiVersion, 'DeleteOptions', raw)), {
        apiVersion,
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid: 'uid-1', resourceVersion: '7' },
        propagationPolicy: 'Foreground',
        dryRun: ['All'],
      });
    }
  });

  test('unknown fields of every wire type are skipped', () => {
    const unknowns = [
      int(99, 2n ** 63n),
      fixed64(100),
      bytes(101, 'junk'),
      fixed32(102),
      group(103, int(1, 5), bytes(2, 'x')),
    ];
    const raw = Buffer.concat([
      ...unknowns,
      msg(1, objectMeta('s1', 'ns1'), ...unknowns, entry(11, 'k', 'v')),
      msg(2, bytes(1, 'key'), bytes(3, 'ignored'), bytes(2, 'value')), // unknown field inside a map entry
      ...unknowns,
      bytes(3, 'Opaque'),
    ]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Secret', raw, ...unknowns)), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1', namespace: 'ns1', labels: { k: 'v' } },
      data: { key: Buffer.from('value').toString('base64') },
      type: 'Opaque',
    });
  });

  test('truncated input is a 400', () => {
    const raw = Buffer.concat([
      msg(1, objectMeta('s1', 'ns1', entry(11, 'a', 'b'))),
      entry(2, 'k', 'v'),
      bytes(3, 'Opaque'),
    ]);
    const full = Buffer.concat([MAGIC, msg(1, bytes(1, 'v1'), bytes(2, 'Secret')), bytes(2, raw)]);
    const rawTagAt = full.length - raw.length - 1 - varint(raw.length).length;
    assert.equal(full[rawTagAt], 0x12);
    assert.equal(decodeProtobufObject(full).kind, 'Secret');
    for (let cut = rawTagAt + 1; cut < full.length; cut++) {
      assertStatus(() => decodeProtobufObject(full.subarray(0, cut)), 400, /unexpected end of data/);
    }
    // A varint that never ends, and a length past the end of its message.
    assertStatus(() => decodeProtobufObject(envelope('v1', 'Secret', Buffer.from([0x38, 0xff, 0xff]))), 400);
    assertStatus(() => decodeProtobufObject(envelope('v1', 'Secret', Buffer.from([0x1a, 0x05, 0x41]))), 400);
  });

  test('bad magic, empty bodies, missing and unsupported kinds, wrong wire types', () => {
    assertStatus(() => decodeProtobufObject(Buffer.alloc(0)), 400, /empty/);
    assertStatus(() => decodeProtobufObject(MAGIC), 400, /empty/);
    assertStatus(
      () => decodeProtobufObject(Buffer.from('{"kind":"Secret"}')),
      400,
      /does not appear to be a protobuf/,
    );
    assertStatus(() => decodeProtobufObject(Buffer.from('k8s')), 400, /does not appear to be a protobuf/);
    assertStatus(
      () => decodeProtobufObject(Buffer.concat([MAGIC, msg(1, bytes(1, 'v1')), bytes(2, '')])),
      400,
      /Kind/,
    );
    assertStatus(
      () => decodeProtobufObject(envelope('apps/v1', 'StatefulSet', Buffer.alloc(0))),
      415,
      /apps\/v1, Kind=StatefulSet/,
    );
    assertStatus(
      () => decodeProtobufObject(envelope('v1', 'Pod', Buffer.alloc(0))),
      415,
      /application\/json/,
    );
    // metadata (field 1) as a varint instead of a message.
    assertStatus(() => decodeProtobufObject(envelope('v1', 'Secret', int(1, 5))), 400, /wire type/);
    // Compressed payloads are not understood.
    const encoded = Buffer.concat([
      MAGIC,
      msg(1, bytes(1, 'v1'), bytes(2, 'Secret')),
      bytes(2, ''),
      bytes(3, 'gzip'),
    ]);
    assertStatus(() => decodeProtobufObject(encoded), 400, /contentEncoding/);
  });
});

describe('parseObjectBody', () => {
  const json = Buffer.from('{"kind":"ConfigMap","metadata":{"name":"c"}}');
  const proto = envelope('v1', 'ConfigMap', msg(1, objectMeta('c', '')));

  test('JSON when the type is JSON, absent or */*', () => {
    for (const type of [
      undefined,
      '',
      '*/*',
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON',
    ]) {
      assert.deepEqual(
        parseObjectBody(json, type),
        { kind: 'ConfigMap', metadata: { name: 'c' } },
        String(type),
      );
    }
    assertStatus(() => parseObjectBody(Buffer.from('[1]'), 'application/json'), 400);
  });

  test('Kubernetes protobuf', () => {
    assert.deepEqual(parseObjectBody(proto, PROTOBUF_MEDIA_TYPE), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
    });
    assert.equal(parseObjectBody(proto, `${PROTOBUF_MEDIA_TYPE};charset=binary`).kind, 'ConfigMap');
  });

  test('YAML is decoded; other media types are 415', () => {
    assert.deepEqual(parseObjectBody(Buffer.from('kind: ConfigMap\ndata: {a: "1"}'), 'application/yaml'), {
      kind: 'ConfigMap',
      data: { a: '1' },
    });
    assertStatus(() => parseObjectBody(json, 'text/plain'), 415, /text\/plain/);
    assertStatus(() => parseObjectBody(json, 'application/merge-patch+json'), 415);
  });
});

// --- End to end ------------------------------------------------------------------------------------------------

const run = promisify(execFile);

async function which(command: string): Promise<boolean> {
  try {
    await run(command, command === 'kubectl' ? ['version', '--client'] : ['version'], { timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

describe('protobuf bodies over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  test('POST and PUT of a protobuf Lease and Event, DELETE with protobuf DeleteOptions', async () => {
    await server.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: 'pb-http' } } });
    const protobuf = { 'Content-Type': PROTOBUF_MEDIA_TYPE };
    const lease = (holder: string, resourceVersion = '') =>
      envelope(
        'coordination.k8s.io/v1',
        'Lease',
        Buffer.concat([
          msg(1, bytes(1, 'leader'), bytes(3, 'pb-http'), bytes(6, resourceVersion), msg(8)),
          msg(2, bytes(1, holder), int(2, 15), msg(4, int(1, JAN_1_2024), int(2, 250_000_000)), int(5, 0)),
        ]),
      );
    const path = '/apis/coordination.k8s.io/v1/namespaces/pb-http/leases';
    const created = await server.fetch('POST', path, { rawBody: lease('a'), headers: protobuf });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.holderIdentity, 'a');
    assert.equal(created.json.spec.renewTime, '2024-01-01T00:00:00.250000Z');
    assert.equal(created.json.spec.leaseTransitions, 0);

    const updated = await server.fetch('PUT', `${path}/leader`, {
      rawBody: lease('b', created.json.metadata.resourceVersion),
      headers: protobuf,
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await server.fetch('GET', `${path}/leader`)).json.spec.holderIdentity, 'b');

    const event = envelope(
      'v1',
      'Event',
      Buffer.concat([
        msg(1, bytes(1, 'ev1'), bytes(3, 'pb-http'), msg(8)),
        msg(
          2,
          bytes(1, 'Lease'),
          bytes(2, 'pb-http'),
          bytes(3, 'leader'),
          bytes(5, 'coordination.k8s.io/v1'),
        ),
        bytes(3, 'LeaderElection'),
        bytes(4, 'b became leader'),
        msg(5, bytes(1, 'test')),
        msg(6, int(1, JAN_1_2024)),
        msg(7, int(1, JAN_1_2024)),
        int(8, 1),
        bytes(9, 'Normal'),
        msg(10),
        bytes(14, ''),
        bytes(15, ''),
      ]),
    );
    const ev = await server.fetch('POST', '/api/v1/namespaces/pb-http/events', {
      rawBody: event,
      headers: protobuf,
    });
    assert.equal(ev.status, 201, ev.text);
    assert.equal(ev.json.involvedObject.name, 'leader');
    assert.equal(ev.json.firstTimestamp, '2024-01-01T00:00:00Z');
    assert.equal(ev.json.source.component, 'test');

    const options = envelope(
      'meta.k8s.io/v1',
      'DeleteOptions',
      Buffer.concat([msg(2, bytes(1, 'wrong-uid'))]),
    );
    const conflict = await server.fetch('DELETE', `${path}/leader`, { rawBody: options, headers: protobuf });
    assert.equal(conflict.status, 409, conflict.text);
    const deleted = await server.fetch('DELETE', `${path}/leader`, {
      rawBody: envelope('meta.k8s.io/v1', 'DeleteOptions', bytes(4, 'Background')),
      headers: protobuf,
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await server.fetch('GET', `${path}/leader`)).status, 404);
  });

  test('unsupported kinds are 415, malformed protobuf is 400', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const pod = await server.fetch('POST', path, {
      rawBody: envelope('v1', 'Pod', Buffer.alloc(0)),
      headers: { 'Content-Type': PROTOBUF_MEDIA_TYPE },
    });
    assert.equal(pod.status, 415, pod.text);
    assert.equal(pod.json.reason, 'UnsupportedMediaType');
    const bad = await server.fetch('POST', path, {
      rawBody: Buffer.from('k8s\0\x0a\x05'),
      headers: { 'Content-Type': PROTOBUF_MEDIA_TYPE },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.reason, 'BadRequest');
  });

  test('groups nested 500000 deep in an unknown field are skipped without recursion: 400s, never a 500', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const starts = Buffer.concat(Array.from({ length: 500_000 }, () => tag(11, 3)));
    const ends = Buffer.concat(Array.from({ length: 500_000 }, () => tag(11, 4)));
    for (const [body, message] of [
      [Buffer.concat([MAGIC, starts]), 'unable to decode protobuf body: unexpected end of data'],
      // Closed and skipped whole: what is left is an envelope without a kind.
      [Buffer.concat([MAGIC, starts, ends]), "Object 'Kind' is missing in the protobuf body"],
      [Buffer.concat([MAGIC, starts, tag(12, 4)]), 'unable to decode protobuf body: mismatched end group'],
    ] as const) {
      const res = await server.fetch('POST', path, {
        rawBody: body,
        headers: { 'Content-Type': PROTOBUF_MEDIA_TYPE },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.message, message);
    }
  });
});

describe('kubectl sends protobuf', async () => {
  const hasKubectl = await which('kubectl');
  if (!hasKubectl) console.log('skipping kubectl tests: kubectl is not on PATH');
  let server: TestServer;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const kubectl = (...args: string[]) => run('kubectl', args, { env, timeout: 60_000 });

  before(async () => {
    if (!hasKubectl) return;
    server = await startTestServer();
    work = await mkdtemp(join(tmpdir(), 'certkit-kubectl-'));
    env = { ...process.env, KUBECONFIG: server.kubeconfigPath, KUBECACHEDIR: join(work, 'cache') };
  });
  after(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('create namespace (sent as protobuf)', { skip: !hasKubectl && 'kubectl is not on PATH' }, async () => {
    const { stdout, stderr } = await kubectl('create', 'namespace', 'pb-test', '-v=8');
    assert.match(stdout, /namespace\/pb-test created/);
    assert.match(stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    const ns = await server.fetch('GET', '/api/v1/namespaces/pb-test');
    assert.equal(ns.status, 200);
    assert.equal(ns.json.status.phase, 'Active');
  });

  test('create secret generic', { skip: !hasKubectl && 'kubectl is not on PATH' }, async () => {
    await kubectl('-n', 'pb-test', 'create', 'secret', 'generic', 's1', '--from-literal=password=s3cret');
    const secret = await server.fetch('GET', '/api/v1/namespaces/pb-test/secrets/s1');
    assert.equal(secret.status, 200, secret.text);
    assert.equal(secret.json.type, 'Opaque');
    assert.equal(Buffer.from(secret.json.data.password, 'base64').toString(), 's3cret');
  });

  test('create secret tls', { skip: !hasKubectl && 'kubectl is not on PATH' }, async (t) => {
    const key = join(work, 'tls.key');
    const cert = join(work, 'tls.crt');
    try {
      await run(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-subj',
          '/CN=x',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '1',
        ],
        { timeout: 30_000 },
      );
    } catch (err) {
      console.log(
        `skipping kubectl create secret tls: openssl failed or is missing (${(err as Error).message})`,
      );
      t.skip('openssl is not available');
      return;
    }
    await kubectl('-n', 'pb-test', 'create', 'secret', 'tls', 't1', `--cert=${cert}`, `--key=${key}`);
    const secret = await server.fetch('GET', '/api/v1/namespaces/pb-test/secrets/t1');
    assert.equal(secret.status, 200, secret.text);
    assert.equal(secret.json.type, 'kubernetes.io/tls');
    assert.equal(Buffer.from(secret.json.data['tls.crt'], 'base64').toString(), await readFile(cert, 'utf8'));
    assert.equal(Buffer.from(secret.json.data['tls.key'], 'base64').toString(), await readFile(key, 'utf8'));
  });

  test('create configmap', { skip: !hasKubectl && 'kubectl is not on PATH' }, async () => {
    await kubectl('-n', 'pb-test', 'create', 'configmap', 'c1', '--from-literal=a=b');
    const cm = await server.fetch('GET', '/api/v1/namespaces/pb-test/configmaps/c1');
    assert.equal(cm.status, 200, cm.text);
    assert.deepEqual(cm.json.data, { a: 'b' });
  });

  test('create serviceaccount', { skip: !hasKubectl && 'kubectl is not on PATH' }, async () => {
    await kubectl('-n', 'pb-test', 'create', 'serviceaccount', 'sa1');
    const sa = await server.fetch('GET', '/api/v1/namespaces/pb-test/serviceaccounts/sa1');
    assert.equal(sa.status, 200, sa.text);
    assert.equal(sa.json.metadata.name, 'sa1');
  });

  test('delete secret', { skip: !hasKubectl && 'kubectl is not on PATH' }, async () => {
    const { stdout } = await kubectl('-n', 'pb-test', 'delete', 'secret', 's1');
    assert.match(stdout, /secret "s1" deleted/);
    assert.equal((await server.fetch('GET', '/api/v1/namespaces/pb-test/secrets/s1')).status, 404);
  });
});
