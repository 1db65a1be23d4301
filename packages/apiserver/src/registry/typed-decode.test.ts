import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { loadModel, type ModelType } from './kube-models.ts';
import { decodeTyped } from './typed-decode.ts';

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
