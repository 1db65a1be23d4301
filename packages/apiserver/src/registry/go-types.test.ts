import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deleteOptionsTypeError, objectMetaTypeError } from './go-types.ts';

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
