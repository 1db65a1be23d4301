import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { loadModel, type ModelType } from './kube-models.ts';
import { decodeTyped, deleteOptionsTypeError, objectMetaTypeError } from './go-decode.ts';

let event: ModelType;
let crd: ModelType;
before(async () => {
  [event, crd] = await Promise.all([loadModel('CoreV1Event'), loadModel('V1CustomResourceDefinition')]);
});

describe('decodeTyped', () => {
  it('accepts a well typed object and null for any field, as Go decodes null to the zero value', () => {
    const obj = {
      metadata: { name: 'e', labels: null, generation: 3 },
      involvedObject: { kind: 'Pod', name: 'p' },
      count: 2,
      eventTime: '2024-01-02T03:04:05.123456Z',
      lastTimestamp: null,
    };
    assert.deepEqual(decodeTyped(obj, event), { unknown: [] });
  });

  it('reports an integer that does not fit or is fractional with the number, as Go does', () => {
    assert.equal(
      decodeTyped({ count: 1.5 }, event).typeError,
      'json: cannot unmarshal number 1.5 into Go struct field Event.count of type int32',
    );
    assert.equal(
      decodeTyped({ metadata: { generation: 2 ** 64 } }, event).typeError,
      `json: cannot unmarshal number ${2 ** 64} into Go struct field ObjectMeta.metadata.generation of type int64`,
    );
  });

  it('reports times the way metav1.Time reads them, without a field', () => {
    assert.equal(
      decodeTyped({ lastTimestamp: 5 }, event).typeError,
      'json: cannot unmarshal number into Go value of type string',
    );
    assert.equal(
      decodeTyped({ lastTimestamp: 'yesterday' }, event).typeError,
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    );
    assert.equal(
      decodeTyped({ eventTime: 'soon' }, event).typeError,
      'parsing time "soon" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "soon" as "2006"',
    );
  });

  it('stops at the first type error, in document order', () => {
    const result = decodeTyped({ reason: 1, message: 2 }, event);
    assert.equal(
      result.typeError,
      'json: cannot unmarshal number into Go struct field Event.reason of type string',
    );
  });

  it('names nested struct fields through lists and maps without indices or keys, as Go does', () => {
    const obj = {
      spec: {
        versions: [{ name: 'v1', schema: { openAPIV3Schema: { properties: { size: { type: 7 } } } } }],
      },
    };
    assert.equal(
      decodeTyped(obj, crd).typeError,
      'json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.type of type string',
    );
  });

  it('drops unknown fields and reports them with indices and map keys', () => {
    const obj = {
      spec: {
        names: { plural: 'a', extra: 1 },
        versions: [
          { name: 'v1', schema: { openAPIV3Schema: { properties: { size: { type: 'integer', bad: 1 } } } } },
        ],
      },
      status: { x: 1 },
    };
    const { unknown } = decodeTyped(obj, crd);
    assert.deepEqual(unknown, [
      'spec.names.extra',
      'spec.versions[0].schema.openAPIV3Schema.properties.size.bad',
      'status.x',
    ]);
    assert.deepEqual(obj.spec.names, { plural: 'a' });
    assert.deepEqual(obj.status, {});
  });

  it('keeps unknown fields when asked only to look', () => {
    const obj = { bogus: 1 };
    assert.deepEqual(decodeTyped(obj, event, false).unknown, ['bogus']);
    assert.deepEqual(obj, { bogus: 1 });
  });
});

describe("Go's decode errors for wrongly typed metadata", () => {
  it('names the struct, the path from the root and the Go type, as encoding/json does', () => {
    const meta = (metadata: unknown) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata });
    assert.equal(
      objectMetaTypeError(meta({ finalizers: 'x' }), 'ConfigMap'),
      'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string',
    );
    assert.equal(
      objectMetaTypeError(meta({ ownerReferences: [{ uid: 5 }] }), 'ConfigMap'),
      'json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.uid of type types.UID',
    );
    assert.equal(
      objectMetaTypeError(meta('x'), 'ConfigMap'),
      'json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta',
    );
  });

  it('decodes custom resources’ metadata on its own, as apiextensions-apiserver does', () => {
    const cr = (metadata: unknown) => ({ apiVersion: 'x/v1', kind: 'X', metadata });
    assert.equal(
      objectMetaTypeError(cr({ labels: { a: 1 } }), undefined),
      'json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string',
    );
    assert.equal(
      objectMetaTypeError(cr([1]), undefined),
      'json: cannot unmarshal array into Go value of type v1.ObjectMeta',
    );
  });

  it('quotes numbers that do not fit an integer, and takes whole numbers written as floats', () => {
    const cr = (metadata: unknown) => ({ metadata });
    assert.equal(
      objectMetaTypeError(cr({ generation: 1.5 }), undefined),
      'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64',
    );
    assert.equal(objectMetaTypeError(cr({ generation: 2 }), undefined), undefined);
    assert.equal(
      objectMetaTypeError(cr({ generation: '2' }), undefined),
      'json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64',
    );
  });

  it('reports the first wrong member in document order; nulls and unknown members are no error', () => {
    const obj = { metadata: { labels: null, bogus: 5, name: 7, finalizers: 'x' } };
    assert.equal(
      objectMetaTypeError(obj, undefined),
      'json: cannot unmarshal number into Go struct field ObjectMeta.name of type string',
    );
    assert.equal(
      objectMetaTypeError({ metadata: { finalizers: [null], labels: { a: null } } }, undefined),
      undefined,
    );
    // A member named __proto__ is data (JSON.parse makes it an own member), and not one of ObjectMeta's.
    assert.equal(objectMetaTypeError(JSON.parse('{"metadata":{"__proto__":5}}'), undefined), undefined);
  });

  it('reads apiVersion and kind first, as the decoder finds the type before the object', () => {
    assert.equal(
      objectMetaTypeError({ apiVersion: 5, metadata: 'x' }, 'ConfigMap'),
      "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string",
    );
  });

  it('checks DeleteOptions bodies too', () => {
    assert.equal(
      deleteOptionsTypeError({ preconditions: { uid: 5 } }),
      'json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID',
    );
    assert.equal(
      deleteOptionsTypeError('x'),
      'json: cannot unmarshal string into Go value of type v1.DeleteOptions',
    );
    assert.equal(deleteOptionsTypeError({ propagationPolicy: 'Orphan', dryRun: ['All'] }), undefined);
  });
});
