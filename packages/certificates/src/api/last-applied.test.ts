import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LAST_APPLIED_ANNOTATION,
  lastAppliedConfiguration,
  withLastAppliedConfiguration,
} from './last-applied.ts';

// The expected strings are what kubectl 1.3x wrote for these manifests (`kubectl apply`, then the annotation
// read back); deploy-manifests.e2e.test.ts checks the real files against a real kubectl.
describe('lastAppliedConfiguration', () => {
  it('writes the object as kubectl does: keys sorted, empty annotations kept, a final newline', () => {
    assert.equal(
      lastAppliedConfiguration({
        kind: 'Namespace',
        apiVersion: 'v1',
        metadata: { name: 'certkit' },
      } as never),
      '{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{},"name":"certkit"}}\n',
    );
  });

  it('sorts nested keys and keeps array order', () => {
    assert.equal(
      lastAppliedConfiguration({
        metadata: { name: 'r', labels: { z: '1', a: '2' } },
        rules: [{ verbs: ['get', 'create'], apiGroups: [''] }],
      } as never),
      '{"metadata":{"annotations":{},"labels":{"a":"2","z":"1"},"name":"r"},' +
        '"rules":[{"apiGroups":[""],"verbs":["get","create"]}]}\n',
    );
  });

  it('escapes <, >, & and the line separators as Go does', () => {
    assert.equal(
      lastAppliedConfiguration({ description: 'a<b>&c\u2028d\u2029' } as never),
      '{"description":"a\\u003cb\\u003e\\u0026c\\u2028d\\u2029","metadata":{"annotations":{}}}\n',
    );
  });

  it('leaves out an annotation already there, keeps the others, and numbers and booleans as they are', () => {
    const obj = {
      metadata: { name: 'x', annotations: { [LAST_APPLIED_ANNOTATION]: 'old', note: 'kept' } },
      spec: { replicas: 2, preserve: true, none: null },
    };
    assert.equal(
      lastAppliedConfiguration(obj as never),
      '{"metadata":{"annotations":{"note":"kept"},"name":"x"},"spec":{"none":null,"preserve":true,"replicas":2}}\n',
    );
  });

  it('withLastAppliedConfiguration adds it, leaving the object given untouched', () => {
    const obj: {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string; annotations?: Record<string, string> };
    } = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'certkit', namespace: 'certkit' },
    };
    const annotated = withLastAppliedConfiguration(obj);
    assert.deepEqual(annotated.metadata?.annotations, {
      [LAST_APPLIED_ANNOTATION]:
        '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"annotations":{},"name":"certkit","namespace":"certkit"}}\n',
    });
    assert.equal('annotations' in obj.metadata, false);
    // Applying it again records the same: the annotation never nests.
    assert.equal(
      lastAppliedConfiguration(annotated),
      annotated.metadata?.annotations?.[LAST_APPLIED_ANNOTATION],
    );
  });
});
