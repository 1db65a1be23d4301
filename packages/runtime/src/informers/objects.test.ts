import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { composeTransforms, stripManagedFields, type TransformFunc } from './objects.ts';

/**
 * The transforms an informer or cache applies before an object is stored (controller-runtime's
 * TransformStripManagedFields, and TransformFuncs chained as controllers chain them).
 */

const secret = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: 's',
    namespace: 'ns',
    labels: { a: 'b' },
    managedFields: [
      { manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } },
    ],
  },
});

describe('stripManagedFields', () => {
  it('drops metadata.managedFields and keeps the rest', () => {
    const obj = secret();
    const out = stripManagedFields(obj);
    assert.equal(out, obj, 'in place, the same object');
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'ns', labels: { a: 'b' } },
    });
  });

  it('is idempotent, and passes objects without managedFields or metadata unchanged', () => {
    const once = stripManagedFields(secret());
    assert.deepEqual(stripManagedFields(structuredClone(once)), once);
    const bare = { apiVersion: 'v1', kind: 'Status' } as KubeObject;
    assert.deepEqual(stripManagedFields(bare), { apiVersion: 'v1', kind: 'Status' });
    assert.equal(stripManagedFields(null as unknown as KubeObject), null);
  });
});

describe('composeTransforms', () => {
  const tag =
    (value: string): TransformFunc =>
    (obj) => {
      const metadata = obj.metadata!;
      metadata.annotations = {
        ...metadata.annotations,
        order: `${metadata.annotations?.order ?? ''}${value}`,
      };
      return obj;
    };

  it('applies the transforms in order, skipping undefined ones', () => {
    const t = composeTransforms(stripManagedFields, undefined, tag('a'), tag('b'))!;
    const out = t(secret());
    assert.equal(out.metadata?.managedFields, undefined);
    assert.equal(out.metadata?.annotations?.order, 'ab');
  });

  it("uses what a transform returns as the next one's input", () => {
    const replace: TransformFunc = (obj) => ({
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: { name: 'other' },
    });
    const out = composeTransforms(replace, tag('x'))!(secret());
    assert.deepEqual(out.metadata, { name: 'other', annotations: { order: 'x' } });
  });

  it('gives undefined for none and the transform itself for one', () => {
    assert.equal(composeTransforms(), undefined);
    assert.equal(composeTransforms(undefined, undefined), undefined);
    assert.equal(composeTransforms(undefined, stripManagedFields), stripManagedFields);
  });
});
