import {
  formatMicroTime,
  formatTime,
  newBadRequest,
  newStatusError,
  newUnsupportedMediaType,
  StatusError,
} from '@certkit/apimachinery';
import { parseJsonObject } from './respond.ts';
import { InexactNumber, InexactNumberError, throwIfInexact } from '../decode/exact-numbers.ts';
import { parseYamlObject } from '../decode/yaml-body.ts';
import { workloadKinds } from './protobuf-kinds.ts';

/**
 * Request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), which client-go (and so kubectl)
 * sends for built-in kinds and does not retry as JSON. The body is the magic `k8s\0` followed by a
 * `runtime.Unknown` whose `raw` is the object's own message; that message is decoded into the JSON shape
 * kube-apiserver's JSON encoder would write for it, for the built-in kinds this server serves.
 *
 * Field numbers are from the upstream generated.proto files: k8s.io/apimachinery pkg/runtime (Unknown, TypeMeta)
 * and pkg/apis/meta/v1 (ObjectMeta, OwnerReference, ManagedFieldsEntry, FieldsV1, Time, MicroTime, DeleteOptions,
 * Preconditions), k8s.io/api core/v1 (Secret, ConfigMap, Namespace, ServiceAccount, Event and their parts) and
 * coordination/v1 (Lease, LeaseSpec); authentication/v1 (TokenRequest, TokenRequestSpec, BoundObjectReference).
 *
 * Go's marshaller writes every non-pointer field, zero or not, so zero scalars are dropped as `omitempty` drops
 * them in JSON, except for fields that are pointers in Go or lack `omitempty` (marked `keep`). A zero Time is
 * dropped too (JSON `null`, or omitted with `omitzero`).
 */

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

function truncated(): StatusError {
  return newBadRequest('unable to decode protobuf body: unexpected end of data');
}

/** A protobuf wire-format reader over one message's bytes. */
export class ProtoReader {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;

  constructor(buf: Buffer, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  atEnd(): boolean {
    return this.pos >= this.end;
  }

  /** An unsigned varint; up to 7 bytes (49 bits) exactly as a Number, longer ones through BigInt as uint64. */
  varint(): number | bigint {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw truncated();
      const b = this.buf[this.pos++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    let big = BigInt(value);
    for (let shift = 49n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw truncated();
      const b = this.buf[this.pos++];
      big |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, big);
    }
    throw newBadRequest('unable to decode protobuf body: integer overflow');
  }

  /** A varint that must fit a Number (tags, lengths). */
  uint(): number {
    const v = this.varint();
    if (typeof v === 'bigint')
      throw newBadRequest('unable to decode protobuf body: length or tag out of range');
    return v;
  }

  /**
   * An int64 as a Number; beyond ±(2^53 − 1) a stand-in that decodeProtobufObject refuses with its path, as
   * a JSON body's number (decode/exact-numbers.ts, ADR 0403), rather than a rounded Number.
   */
  int64(): number | InexactNumber {
    const v = this.varint();
    if (typeof v !== 'bigint') return v;
    const signed = BigInt.asIntN(64, v);
    const value = Number(signed);
    if (Number.isSafeInteger(value)) return value;
    inexactInt64Seen = true;
    return new InexactNumber(String(signed));
  }

  int32(): number {
    const v = this.varint();
    return typeof v === 'bigint' ? Number(BigInt.asIntN(32, v)) : v | 0;
  }

  /** The bounds of a length-delimited field's payload; the reader moves past it. */
  delimited(): [number, number] {
    const length = this.uint();
    const start = this.pos;
    if (length > this.end - start) throw truncated();
    this.pos = start + length;
    return [start, start + length];
  }

  bytes(): Buffer {
    const [start, end] = this.delimited();
    return this.buf.subarray(start, end);
  }

  sub(): ProtoReader {
    const [start, end] = this.delimited();
    return new ProtoReader(this.buf, start, end);
  }

  /** Skips a field of an unknown number by its wire type, as protobuf decoders do. */
  skip(wireType: number, fieldNumber: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_BYTES:
        this.delimited();
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      case WIRE_START_GROUP: {
        // Groups nest in a byte each: skipped with a stack of the open ones, not by recursion, which a body of
        // nested group starts took past the call stack's size (a 500).
        const open = [fieldNumber];
        while (open.length > 0) {
          if (this.atEnd()) throw truncated();
          const tag = this.uint();
          const type = tag % 8;
          const number = Math.floor(tag / 8);
          if (type === WIRE_START_GROUP) open.push(number);
          else if (type !== WIRE_END_GROUP) this.skip(type, number);
          else if (open.pop() !== number) {
            throw newBadRequest('unable to decode protobuf body: mismatched end group');
          }
        }
        return;
      }
      default:
        throw newBadRequest(
          `unable to decode protobuf body: illegal wire type ${wireType} for field ${fieldNumber}`,
        );
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) throw truncated();
    this.pos += n;
  }
}

// --- Declarative message tables -------------------------------------------------------------------------------

/** `bytes` become base64 strings as in JSON; `raw` stays a Buffer (Unknown.raw, FieldsV1.Raw). */
export type Scalar = 'string' | 'bytes' | 'raw' | 'bool' | 'int32' | 'int64';
type Flag = 'repeated' | 'map' | 'keep';
/** [field number, JSON name, type, flags...]; a `map` field's type is its value type (keys are strings). */
export type FieldRow = [number, string, Scalar | Message, ...Flag[]];

interface Field {
  name: string;
  type: Scalar | Message;
  repeated: boolean;
  map: boolean;
  /** Emit zero values too: the Go field is a pointer or its JSON tag lacks omitempty. */
  keep: boolean;
}

export interface Message {
  fields: Map<number, Field>;
  /** Turns the decoded fields into the JSON value (Time → string); undefined omits the field. */
  convert?: (decoded: Record<string, unknown>) => unknown;
  /**
   * Set on a message whose table holds only part of the upstream fields (a PodSpec's common ones): the
   * name of its type, for the 415 a field outside the table gets instead of being dropped unseen.
   */
  partial?: string;
}

function message(rows: FieldRow[], convert?: Message['convert'], partial?: string): Message {
  const fields = new Map<number, Field>();
  for (const [number, name, type, ...flags] of rows) {
    fields.set(number, {
      name,
      type,
      repeated: flags.includes('repeated'),
      map: flags.includes('map'),
      keep: flags.includes('keep'),
    });
  }
  return { fields, convert, partial };
}

/** The instant `seconds` after the epoch, refused as Go's Time.MarshalJSON refuses a year it cannot write. */
function timeOf(seconds: number): Date {
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(seconds) || Number.isNaN(date.getTime()) || year < 0 || year > 9999) {
    throw newBadRequest('unable to decode protobuf body: Time.MarshalJSON: year outside of range [0,9999]');
  }
  return date;
}

/** metav1.Time: Go keeps whole seconds only (time_proto.go ignores nanos); an empty message is the zero time. */
const Time = message(
  [
    [1, 'seconds', 'int64', 'keep'],
    [2, 'nanos', 'int32', 'keep'],
  ],
  (t) =>
    t.seconds === undefined && t.nanos === undefined
      ? undefined
      : formatTime(timeOf((t.seconds as number) ?? 0)),
);

/** metav1.MicroTime: nanos truncated to microseconds (micro_time_proto.go). */
const MicroTime = message(
  [
    [1, 'seconds', 'int64', 'keep'],
    [2, 'nanos', 'int32', 'keep'],
  ],
  (t) => {
    if (t.seconds === undefined && t.nanos === undefined) return undefined;
    const micros = Math.trunc(((t.nanos as number) ?? 0) / 1000);
    const carry = Math.floor(micros / 1_000_000);
    return formatMicroTime(timeOf(((t.seconds as number) ?? 0) + carry), micros - carry * 1_000_000);
  },
);

/** metav1.FieldsV1: its Raw bytes are the JSON itself. */
const FieldsV1 = message([[1, 'Raw', 'raw', 'keep']], (f) => {
  const raw = ((f.Raw as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8');
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw newBadRequest(`unable to decode protobuf body: fieldsV1: ${(err as Error).message}`);
  }
});

const OwnerReference = message([
  [5, 'apiVersion', 'string', 'keep'],
  [1, 'kind', 'string', 'keep'],
  [3, 'name', 'string', 'keep'],
  [4, 'uid', 'string', 'keep'],
  [6, 'controller', 'bool', 'keep'],
  [7, 'blockOwnerDeletion', 'bool', 'keep'],
]);

const ManagedFieldsEntry = message([
  [1, 'manager', 'string'],
  [2, 'operation', 'string'],
  [3, 'apiVersion', 'string'],
  [4, 'time', Time],
  [6, 'fieldsType', 'string'],
  [7, 'fieldsV1', FieldsV1],
  [8, 'subresource', 'string'],
]);

const ObjectMeta = message([
  [1, 'name', 'string'],
  [2, 'generateName', 'string'],
  [3, 'namespace', 'string'],
  [4, 'selfLink', 'string'],
  [5, 'uid', 'string'],
  [6, 'resourceVersion', 'string'],
  [7, 'generation', 'int64'],
  [8, 'creationTimestamp', Time],
  [9, 'deletionTimestamp', Time],
  [10, 'deletionGracePeriodSeconds', 'int64', 'keep'],
  [11, 'labels', 'string', 'map'],
  [12, 'annotations', 'string', 'map'],
  [13, 'ownerReferences', OwnerReference, 'repeated'],
  [14, 'finalizers', 'string', 'repeated'],
  [17, 'managedFields', ManagedFieldsEntry, 'repeated'],
]);

const ObjectReference = message([
  [1, 'kind', 'string'],
  [2, 'namespace', 'string'],
  [3, 'name', 'string'],
  [4, 'uid', 'string'],
  [5, 'apiVersion', 'string'],
  [6, 'resourceVersion', 'string'],
  [7, 'fieldPath', 'string'],
]);

const LocalObjectReference = message([[1, 'name', 'string']]);

const Secret = message([
  [1, 'metadata', ObjectMeta],
  [5, 'immutable', 'bool', 'keep'],
  [2, 'data', 'bytes', 'map'],
  [4, 'stringData', 'string', 'map'],
  [3, 'type', 'string'],
]);

const ConfigMap = message([
  [1, 'metadata', ObjectMeta],
  [4, 'immutable', 'bool', 'keep'],
  [2, 'data', 'string', 'map'],
  [3, 'binaryData', 'bytes', 'map'],
]);

const NamespaceCondition = message([
  [1, 'type', 'string', 'keep'],
  [2, 'status', 'string', 'keep'],
  [4, 'lastTransitionTime', Time],
  [5, 'reason', 'string'],
  [6, 'message', 'string'],
]);

const Namespace = message([
  [1, 'metadata', ObjectMeta],
  [2, 'spec', message([[1, 'finalizers', 'string', 'repeated']])],
  [
    3,
    'status',
    message([
      [1, 'phase', 'string'],
      [2, 'conditions', NamespaceCondition, 'repeated'],
    ]),
  ],
]);

const ServiceAccount = message([
  [1, 'metadata', ObjectMeta],
  [2, 'secrets', ObjectReference, 'repeated'],
  [3, 'imagePullSecrets', LocalObjectReference, 'repeated'],
  [4, 'automountServiceAccountToken', 'bool', 'keep'],
]);

const EventSource = message([
  [1, 'component', 'string'],
  [2, 'host', 'string'],
]);

const EventSeries = message([
  [1, 'count', 'int32'],
  [2, 'lastObservedTime', MicroTime],
]);

const Event = message([
  [1, 'metadata', ObjectMeta],
  [2, 'involvedObject', ObjectReference],
  [3, 'reason', 'string'],
  [4, 'message', 'string'],
  [5, 'source', EventSource],
  [6, 'firstTimestamp', Time],
  [7, 'lastTimestamp', Time],
  [8, 'count', 'int32'],
  [9, 'type', 'string'],
  [10, 'eventTime', MicroTime],
  [11, 'series', EventSeries],
  [12, 'action', 'string'],
  [13, 'related', ObjectReference],
  [14, 'reportingComponent', 'string', 'keep'],
  [15, 'reportingInstance', 'string', 'keep'],
]);

const Lease = message([
  [1, 'metadata', ObjectMeta],
  [
    2,
    'spec',
    message([
      [1, 'holderIdentity', 'string', 'keep'],
      [2, 'leaseDurationSeconds', 'int32', 'keep'],
      [3, 'acquireTime', MicroTime],
      [4, 'renewTime', MicroTime],
      [5, 'leaseTransitions', 'int32', 'keep'],
      [6, 'strategy', 'string', 'keep'],
      [7, 'preferredHolder', 'string', 'keep'],
    ]),
  ],
]);

/** authentication.k8s.io/v1 TokenRequest, the body `kubectl create token` posts. */
const TokenRequest = message([
  [1, 'metadata', ObjectMeta],
  [
    2,
    'spec',
    message([
      [1, 'audiences', 'string', 'repeated'],
      [4, 'expirationSeconds', 'int64', 'keep'],
      [
        3,
        'boundObjectRef',
        message([
          [1, 'kind', 'string'],
          [2, 'apiVersion', 'string'],
          [3, 'name', 'string'],
          [4, 'uid', 'string'],
        ]),
      ],
    ]),
  ],
]);

// rbac.authorization.k8s.io/v1, and the access and identity reviews (authorization.k8s.io/v1,
// authentication.k8s.io/v1), numbered as in k8s.io/api's generated.proto.
const PolicyRule = message([
  [1, 'verbs', 'string', 'repeated'],
  [2, 'apiGroups', 'string', 'repeated'],
  [3, 'resources', 'string', 'repeated'],
  [4, 'resourceNames', 'string', 'repeated'],
  [5, 'nonResourceURLs', 'string', 'repeated'],
]);

const LabelSelector = message([
  [1, 'matchLabels', 'string', 'map'],
  [
    2,
    'matchExpressions',
    message([
      [1, 'key', 'string', 'keep'],
      [2, 'operator', 'string', 'keep'],
      [3, 'values', 'string', 'repeated'],
    ]),
    'repeated',
  ],
]);

const RbacSubject = message([
  [1, 'kind', 'string', 'keep'],
  [2, 'apiGroup', 'string'],
  [3, 'name', 'string', 'keep'],
  [4, 'namespace', 'string'],
]);

const RoleRef = message([
  [1, 'apiGroup', 'string', 'keep'],
  [2, 'kind', 'string', 'keep'],
  [3, 'name', 'string', 'keep'],
]);

const Role = message([
  [1, 'metadata', ObjectMeta],
  [2, 'rules', PolicyRule, 'repeated'],
]);

const ClusterRole = message([
  [1, 'metadata', ObjectMeta],
  [2, 'rules', PolicyRule, 'repeated'],
  [3, 'aggregationRule', message([[1, 'clusterRoleSelectors', LabelSelector, 'repeated']])],
]);

const RoleBinding = message([
  [1, 'metadata', ObjectMeta],
  [2, 'subjects', RbacSubject, 'repeated'],
  [3, 'roleRef', RoleRef],
]);

const ResourceAttributes = message([
  [1, 'namespace', 'string'],
  [2, 'verb', 'string'],
  [3, 'group', 'string'],
  [4, 'version', 'string'],
  [5, 'resource', 'string'],
  [6, 'subresource', 'string'],
  [7, 'name', 'string'],
]);

const NonResourceAttributes = message([
  [1, 'path', 'string'],
  [2, 'verb', 'string'],
]);

/** authorization/v1 ExtraValue: a message around the list, which JSON writes as the list itself. */
const ExtraValue = message([[1, 'items', 'string', 'repeated']], (v) => v.items ?? []);

const SubjectAccessReviewSpec = message([
  [1, 'resourceAttributes', ResourceAttributes],
  [2, 'nonResourceAttributes', NonResourceAttributes],
  [3, 'user', 'string'],
  [4, 'groups', 'string', 'repeated'],
  [5, 'extra', ExtraValue, 'map'],
  [6, 'uid', 'string'],
]);

const SubjectAccessReview = message([
  [1, 'metadata', ObjectMeta],
  [2, 'spec', SubjectAccessReviewSpec],
]);

const SelfSubjectAccessReview = message([
  [1, 'metadata', ObjectMeta],
  [
    2,
    'spec',
    message([
      [1, 'resourceAttributes', ResourceAttributes],
      [2, 'nonResourceAttributes', NonResourceAttributes],
    ]),
  ],
]);

const SelfSubjectRulesReview = message([
  [1, 'metadata', ObjectMeta],
  [2, 'spec', message([[1, 'namespace', 'string']])],
]);

const SelfSubjectReview = message([[1, 'metadata', ObjectMeta]]);

const DeleteOptions = message([
  [1, 'gracePeriodSeconds', 'int64', 'keep'],
  [
    2,
    'preconditions',
    message([
      [1, 'uid', 'string', 'keep'],
      [2, 'resourceVersion', 'string', 'keep'],
    ]),
  ],
  [3, 'orphanDependents', 'bool', 'keep'],
  [4, 'propagationPolicy', 'string', 'keep'],
  [5, 'dryRun', 'string', 'repeated'],
  [6, 'ignoreStoreReadErrorWithClusterBreakingPotential', 'bool', 'keep'],
]);

/** The kinds decodable from protobuf, by `apiVersion/kind`. DeleteOptions is accepted under any apiVersion. */
const kinds = new Map<string, Message>([
  ...workloadKinds({ message, Time, ObjectMeta, LocalObjectReference, LabelSelector }),
  ['v1/Secret', Secret],
  ['v1/ConfigMap', ConfigMap],
  ['v1/Namespace', Namespace],
  ['v1/ServiceAccount', ServiceAccount],
  ['v1/Event', Event],
  ['coordination.k8s.io/v1/Lease', Lease],
  ['authentication.k8s.io/v1/TokenRequest', TokenRequest],
  ['rbac.authorization.k8s.io/v1/Role', Role],
  ['rbac.authorization.k8s.io/v1/ClusterRole', ClusterRole],
  ['rbac.authorization.k8s.io/v1/RoleBinding', RoleBinding],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', RoleBinding],
  ['authorization.k8s.io/v1/SubjectAccessReview', SubjectAccessReview],
  ['authorization.k8s.io/v1/LocalSubjectAccessReview', SubjectAccessReview],
  ['authorization.k8s.io/v1/SelfSubjectAccessReview', SelfSubjectAccessReview],
  ['authorization.k8s.io/v1/SelfSubjectRulesReview', SelfSubjectRulesReview],
  ['authentication.k8s.io/v1/SelfSubjectReview', SelfSubjectReview],
]);

const runtimeTypeMeta = message([
  [1, 'apiVersion', 'string'],
  [2, 'kind', 'string'],
]);

const runtimeUnknown = message([
  [1, 'typeMeta', runtimeTypeMeta],
  [2, 'raw', 'raw'],
  [3, 'contentEncoding', 'string'],
  [4, 'contentType', 'string'],
]);

// --- Decoding -----------------------------------------------------------------------------------------------

function expectWireType(field: Field, number: number, actual: number, expected: number): void {
  if (actual !== expected) {
    throw newBadRequest(
      `unable to decode protobuf body: wrong wire type ${actual} for field ${field.name} (${number})`,
    );
  }
}

function isMessage(type: Scalar | Message): type is Message {
  return typeof type === 'object';
}

function readScalar(reader: ProtoReader, type: Scalar): unknown {
  switch (type) {
    case 'string':
      return reader.bytes().toString('utf8');
    case 'bytes':
      return reader.bytes().toString('base64');
    case 'raw':
      return reader.bytes();
    case 'bool': {
      const v = reader.varint();
      return v !== 0 && v !== 0n;
    }
    case 'int32':
      return reader.int32();
    case 'int64':
      return reader.int64();
  }
}

function wireTypeOf(type: Scalar | Message): number {
  return isMessage(type) || type === 'string' || type === 'bytes' || type === 'raw'
    ? WIRE_BYTES
    : WIRE_VARINT;
}

function readValue(reader: ProtoReader, type: Scalar | Message): unknown {
  return isMessage(type) ? decodeMessage(reader.sub(), type) : readScalar(reader, type);
}

function readMapEntry(reader: ProtoReader, valueType: Scalar | Message): [string, unknown] {
  const entry = reader.sub();
  let key = '';
  let value: unknown;
  while (!entry.atEnd()) {
    const tag = entry.uint();
    const number = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (number === 1 && wireType === WIRE_BYTES) key = entry.bytes().toString('utf8');
    else if (number === 2 && wireType === wireTypeOf(valueType)) value = readValue(entry, valueType);
    else entry.skip(wireType, number);
  }
  // Go writes both key and value; a missing one is the zero value (maps here hold strings or bytes).
  if (value === undefined) value = isMessage(valueType) ? {} : '';
  return [key, value];
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false || (Buffer.isBuffer(value) && value.length === 0);
}

/** Whether the body being decoded has an int64 beyond ±(2^53 − 1); decoding is synchronous, one at a time. */
let inexactInt64Seen = false;

function decodeMessage(reader: ProtoReader, spec: Message): unknown {
  const values = new Map<number, unknown>();
  while (!reader.atEnd()) {
    const tag = reader.uint();
    const number = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (number === 0) throw newBadRequest('unable to decode protobuf body: illegal tag 0');
    const field = spec.fields.get(number);
    if (!field) {
      if (spec.partial) {
        throw unsupportedMediaType(
          `the body of the request was in an unsupported format: field ${number} of ${spec.partial} is not decoded from ${PROTOBUF_MEDIA_TYPE} here; send the object as application/json`,
        );
      }
      reader.skip(wireType, number);
      continue;
    }
    if (field.map) {
      expectWireType(field, number, wireType, WIRE_BYTES);
      const map = (values.get(number) as Record<string, unknown> | undefined) ?? {};
      const [key, value] = readMapEntry(reader, field.type);
      map[key] = value;
      values.set(number, map);
    } else if (field.repeated) {
      const list = (values.get(number) as unknown[] | undefined) ?? [];
      const expected = wireTypeOf(field.type);
      if (wireType === WIRE_BYTES && expected === WIRE_VARINT) {
        // Packed repeated scalars.
        const packed = reader.sub();
        while (!packed.atEnd()) list.push(readScalar(packed, field.type as Scalar));
      } else {
        expectWireType(field, number, wireType, expected);
        list.push(readValue(reader, field.type));
      }
      values.set(number, list);
    } else {
      expectWireType(field, number, wireType, wireTypeOf(field.type));
      values.set(number, readValue(reader, field.type));
    }
  }
  const out: Record<string, unknown> = {};
  for (const [number, field] of spec.fields) {
    const value = values.get(number);
    if (value === undefined) continue;
    if (!field.keep && isZero(value)) continue;
    out[field.name] = value;
  }
  return spec.convert ? spec.convert(out) : out;
}

/** Decodes one message's bytes with a table. */
function decodeWith(bytes: Buffer, spec: Message): Record<string, unknown> {
  return decodeMessage(new ProtoReader(bytes), spec) as Record<string, unknown>;
}

/** A 415 with a message of its own (newUnsupportedMediaType's lists the patch types, which do not apply here). */
function unsupportedMediaType(message: string): StatusError {
  return newStatusError(415, 'UnsupportedMediaType', message);
}

function unsupportedKind(apiVersion: string, kind: string): StatusError {
  const supported = [...kinds.keys(), 'DeleteOptions'].join(', ');
  return unsupportedMediaType(
    `the body of the request was in an unsupported format: ${PROTOBUF_MEDIA_TYPE} is not supported for ${apiVersion}, Kind=${kind}; send it as application/json (protobuf is accepted for ${supported})`,
  );
}

/** Decodes a Kubernetes protobuf request body (magic + runtime.Unknown) into the object's JSON form. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length === 0) throw newBadRequest('the request body is empty');
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw newBadRequest(
      `provided data does not appear to be a protobuf message, expected prefix [${[...MAGIC].join(' ')}]`,
    );
  }
  if (body.length === MAGIC.length) throw newBadRequest('the request body is empty');
  const unknown = decodeWith(body.subarray(MAGIC.length), runtimeUnknown);
  const typeMeta = (unknown.typeMeta as { apiVersion?: string; kind?: string } | undefined) ?? {};
  const apiVersion = typeMeta.apiVersion ?? '';
  const kind = typeMeta.kind ?? '';
  if (!kind) throw newBadRequest("Object 'Kind' is missing in the protobuf body");
  if (unknown.contentEncoding) {
    throw newBadRequest(
      `unable to decode protobuf body: unsupported contentEncoding ${JSON.stringify(unknown.contentEncoding)}`,
    );
  }
  const spec = kind === 'DeleteOptions' ? DeleteOptions : kinds.get(`${apiVersion}/${kind}`);
  if (!spec) throw unsupportedKind(apiVersion, kind);
  inexactInt64Seen = false;
  const object = decodeWith((unknown.raw as Buffer | undefined) ?? Buffer.alloc(0), spec);
  if (inexactInt64Seen) {
    try {
      throwIfInexact(object);
    } catch (err) {
      if (err instanceof InexactNumberError) throw err.status;
      throw err;
    }
  }
  return { apiVersion, kind, ...object };
}

// --- Media type dispatch ------------------------------------------------------------------------------------

/**
 * Decodes a POST/PUT/DELETE body by its Content-Type: JSON (also when absent), YAML (kube-apiserver's YAML
 * serializer decodes those three too) or Kubernetes protobuf.
 */
export function parseObjectBody(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  switch (mediaType) {
    case '':
    case '*/*':
    case 'application/json':
      return parseJsonObject(body);
    case PROTOBUF_MEDIA_TYPE:
      return decodeProtobufObject(body);
    case 'application/yaml':
      return parseYamlObject(body);
    default:
      throw newUnsupportedMediaType(contentType ?? '');
  }
}
