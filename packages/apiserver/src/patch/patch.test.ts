import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '@certkit/apimachinery';
import { applyJsonPatch } from './json-patch.ts';
import { applyMergePatch } from './merge-patch.ts';
import {
  applyStrategicMergePatch,
  objectMetaSmp,
  type SmpSchema,
  smpSchemaFor,
} from './strategic-merge-patch.ts';
import { patchTypeFromContentType } from './patch-type.ts';

/** Freezes a value deeply, so that any mutation of a patch input throws in strict mode. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) frozen(member);
    Object.freeze(value);
  }
  return value;
}

function statusOf(code: number, reason: string) {
  return (error: unknown) => {
    assert.ok(error instanceof StatusError, `expected a StatusError, got ${error}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.reason, reason);
    return true;
  };
}

const badRequest = statusOf(400, 'BadRequest');
const unprocessable = statusOf(422, 'Invalid');

describe('patchTypeFromContentType', () => {
  it('maps the four patch media types and ignores parameters', () => {
    assert.equal(patchTypeFromContentType('application/json-patch+json'), 'json');
    assert.equal(patchTypeFromContentType('application/merge-patch+json; charset=utf-8'), 'merge');
    assert.equal(patchTypeFromContentType('application/strategic-merge-patch+json'), 'strategic');
    assert.equal(patchTypeFromContentType('Application/Apply-Patch+YAML'), 'apply');
  });
  it('answers undefined for anything else', () => {
    assert.equal(patchTypeFromContentType('application/json'), undefined);
    assert.equal(patchTypeFromContentType(''), undefined);
    assert.equal(patchTypeFromContentType('constructor'), undefined);
  });
});

describe('applyJsonPatch (RFC 6902 appendix A)', () => {
  const cases: { name: string; doc: unknown; patch: unknown[]; result: unknown }[] = [
    {
      name: 'A.1 adding an object member',
      doc: { foo: 'bar' },
      patch: [{ op: 'add', path: '/baz', value: 'qux' }],
      result: { baz: 'qux', foo: 'bar' },
    },
    {
      name: 'A.2 adding an array element',
      doc: { foo: ['bar', 'baz'] },
      patch: [{ op: 'add', path: '/foo/1', value: 'qux' }],
      result: { foo: ['bar', 'qux', 'baz'] },
    },
    {
      name: 'A.3 removing an object member',
      doc: { baz: 'qux', foo: 'bar' },
      patch: [{ op: 'remove', path: '/baz' }],
      result: { foo: 'bar' },
    },
    {
      name: 'A.4 removing an array element',
      doc: { foo: ['bar', 'qux', 'baz'] },
      patch: [{ op: 'remove', path: '/foo/1' }],
      result: { foo: ['bar', 'baz'] },
    },
    {
      name: 'A.5 replacing a value',
      doc: { baz: 'qux', foo: 'bar' },
      patch: [{ op: 'replace', path: '/baz', value: 'boo' }],
      result: { baz: 'boo', foo: 'bar' },
    },
    {
      name: 'A.6 moving a value',
      doc: { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      patch: [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      result: { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    },
    {
      name: 'A.7 moving an array element',
      doc: { foo: ['all', 'grass', 'cows', 'eat'] },
      patch: [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      result: { foo: ['all', 'cows', 'eat', 'grass'] },
    },
    {
      name: 'A.8 testing a value: success',
      doc: { baz: 'qux', foo: ['a', 2, 'c'] },
      patch: [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      result: { baz: 'qux', foo: ['a', 2, 'c'] },
    },
    {
      name: 'A.10 adding a nested member object',
      doc: { foo: 'bar' },
      patch: [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      result: { foo: 'bar', child: { grandchild: {} } },
    },
    {
      name: 'A.11 ignoring unrecognized elements',
      doc: { foo: 'bar' },
      patch: [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
      result: { foo: 'bar', baz: 'qux' },
    },
    {
      name: 'A.14 ~ escape ordering',
      doc: { '/': 9, '~1': 10 },
      patch: [{ op: 'test', path: '/~01', value: 10 }],
      result: { '/': 9, '~1': 10 },
    },
    {
      name: 'A.16 adding an array value',
      doc: { foo: ['bar'] },
      patch: [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      result: { foo: ['bar', ['abc', 'def']] },
    },
    {
      name: 'copy deep-copies the value',
      doc: { a: { b: [1] } },
      patch: [
        { op: 'copy', from: '/a', path: '/c' },
        { op: 'add', path: '/c/b/-', value: 2 },
      ],
      result: { a: { b: [1] }, c: { b: [1, 2] } },
    },
    {
      name: 'test compares objects regardless of member order',
      doc: { a: { x: 1, y: [1, { z: null }] } },
      patch: [{ op: 'test', path: '/a', value: { y: [1, { z: null }], x: 1 } }],
      result: { a: { x: 1, y: [1, { z: null }] } },
    },
    {
      name: 'the empty path addresses the whole document',
      doc: { a: 1 },
      patch: [{ op: 'replace', path: '', value: { b: 2 } }],
      result: { b: 2 },
    },
    {
      name: 'a kubectl-style metadata edit',
      doc: { metadata: { name: 'x', labels: { 'app.kubernetes.io/name': 'a' } } },
      patch: [
        { op: 'replace', path: '/metadata/labels/app.kubernetes.io~1name', value: 'b' },
        { op: 'add', path: '/metadata/finalizers', value: ['f'] },
      ],
      result: { metadata: { name: 'x', labels: { 'app.kubernetes.io/name': 'b' }, finalizers: ['f'] } },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(applyJsonPatch(frozen(c.doc), frozen(c.patch)), c.result);
    });
  }

  it('answers 422 Invalid for operations that do not apply, naming operation and path', () => {
    const failures: { doc: unknown; op: object; text: RegExp }[] = [
      // A.9: testing a value, error
      {
        doc: { baz: 'qux' },
        op: { op: 'test', path: '/baz', value: 'bar' },
        text: /test operation on "\/baz"/,
      },
      // A.12: adding to a nonexistent target
      {
        doc: { foo: 'bar' },
        op: { op: 'add', path: '/baz/bat', value: 'qux' },
        text: /add operation on "\/baz\/bat"/,
      },
      // A.15: comparing strings and numbers
      { doc: { '/': 9, '~1': 10 }, op: { op: 'test', path: '/~01', value: '10' }, text: /test operation/ },
      { doc: { a: 1 }, op: { op: 'remove', path: '/b' }, text: /remove operation on "\/b"/ },
      { doc: { a: 1 }, op: { op: 'replace', path: '/b', value: 1 }, text: /replace operation on "\/b"/ },
      { doc: { a: [1] }, op: { op: 'add', path: '/a/5', value: 1 }, text: /out of bounds/ },
      { doc: { a: [1] }, op: { op: 'add', path: '/a/01', value: 1 }, text: /out of bounds or not a number/ },
      { doc: { a: [1] }, op: { op: 'remove', path: '/a/-' }, text: /remove operation/ },
      { doc: { a: { b: 1 } }, op: { op: 'move', from: '/a', path: '/a/b/c' }, text: /own child/ },
      { doc: { a: 1 }, op: { op: 'copy', from: '/missing', path: '/b' }, text: /"from" path/ },
      { doc: { a: 1 }, op: { op: 'test', path: '/missing', value: null }, text: /does not exist/ },
    ];
    for (const f of failures) {
      assert.throws(() => applyJsonPatch(f.doc, [f.op]), unprocessable);
      assert.throws(() => applyJsonPatch(f.doc, [f.op]), f.text);
    }
  });

  it('is atomic: a failing operation leaves nothing applied and the input untouched', () => {
    const doc = frozen({ a: 1 });
    const patch = frozen([
      { op: 'add', path: '/b', value: 2 },
      { op: 'test', path: '/a', value: 2 },
    ]);
    assert.throws(() => applyJsonPatch(doc, patch), unprocessable);
    assert.deepEqual(doc, { a: 1 });
  });

  it('answers 400 BadRequest for a malformed patch document', () => {
    const malformed: unknown[] = [
      { op: 'add', path: '/a', value: 1 },
      'nope',
      [null],
      [{ op: 'frobnicate', path: '/a' }],
      [{ op: 'add', value: 1 }],
      [{ op: 'add', path: 'a', value: 1 }],
      [{ op: 'add', path: '/a~2', value: 1 }],
      [{ op: 'add', path: '/a' }],
      [{ op: 'move', path: '/a' }],
    ];
    for (const patch of malformed) assert.throws(() => applyJsonPatch({}, patch), badRequest);
  });

  it('returns values that share nothing with the inputs', () => {
    const value = { deep: { list: [1] } };
    const result = applyJsonPatch({ keep: { x: 1 } }, [{ op: 'add', path: '/v', value }]) as {
      keep: { x: number };
      v: typeof value;
    };
    result.v.deep.list.push(2);
    result.keep.x = 2;
    assert.deepEqual(value, { deep: { list: [1] } });
  });

  it('treats a __proto__ member as plain data', () => {
    const result = applyJsonPatch({}, [
      { op: 'add', path: '/__proto__', value: { polluted: true } },
    ]) as object;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__']);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });
});

describe('applyMergePatch (RFC 7386 appendix A)', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  cases.forEach(([doc, patch, result], i) => {
    it(`example ${i + 1}: ${JSON.stringify(doc)} + ${JSON.stringify(patch)}`, () => {
      assert.deepEqual(applyMergePatch(frozen(doc), frozen(patch)), result);
    });
  });

  it('merges kubectl label and annotation edits on a ConfigMap', () => {
    const doc = frozen({
      metadata: { name: 'cm', labels: { a: '1', b: '2' }, annotations: { x: 'y' } },
      data: { k: 'v' },
    });
    const patch = frozen({ metadata: { labels: { a: null, c: '3' }, annotations: null }, data: { k: 'w' } });
    assert.deepEqual(applyMergePatch(doc, patch), {
      metadata: { name: 'cm', labels: { b: '2', c: '3' } },
      data: { k: 'w' },
    });
  });

  it('returns values that share nothing with the inputs', () => {
    const doc = { keep: { list: [1] } };
    const patch = { add: { list: [2] } };
    const result = applyMergePatch(doc, patch) as { keep: { list: number[] }; add: { list: number[] } };
    result.keep.list.push(9);
    result.add.list.push(9);
    assert.deepEqual(doc, { keep: { list: [1] } });
    assert.deepEqual(patch, { add: { list: [2] } });
  });
});

describe('applyStrategicMergePatch', () => {
  const owner = (uid: string, extra: object = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: `owner-${uid}`,
    uid,
    ...extra,
  });

  it('merges maps like a merge patch and deletes keys set to null', () => {
    const doc = frozen({ metadata: { name: 'cm', labels: { a: '1', b: '2' } }, data: { x: '1', y: '2' } });
    const patch = frozen({ metadata: { labels: { a: null, c: '3' } }, data: { y: null, z: '3' } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, smpSchemaFor('ConfigMap')), {
      metadata: { name: 'cm', labels: { b: '2', c: '3' } },
      data: { x: '1', z: '3' },
    });
  });

  it('replaces lists that have no merge strategy', () => {
    const doc = frozen({ spec: { finalizers: ['kubernetes', 'other'] } });
    const patch = frozen({ spec: { finalizers: ['mine'] } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, smpSchemaFor('Namespace')), {
      spec: { finalizers: ['mine'] },
    });
  });

  it('merges metadata.ownerReferences item by item on uid', () => {
    const doc = frozen({ metadata: { ownerReferences: [owner('a'), owner('b')] } });
    const patch = frozen({ metadata: { ownerReferences: [{ uid: 'a', controller: true }] } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, objectMetaSmp), {
      metadata: { ownerReferences: [owner('a', { controller: true }), owner('b')] },
    });
  });

  it('places new merge-keyed items as upstream does without $setElementOrder: ahead of server-only items', () => {
    const doc = frozen({ metadata: { ownerReferences: [owner('a'), owner('b')] } });
    const patch = frozen({ metadata: { ownerReferences: [owner('c')] } });
    const result = applyStrategicMergePatch(doc, patch, objectMetaSmp) as {
      metadata: { ownerReferences: { uid: string }[] };
    };
    assert.deepEqual(
      result.metadata.ownerReferences.map((o) => o.uid),
      ['c', 'a', 'b'],
    );
  });

  it('orders by $setElementOrder, as kubectl apply sends it', () => {
    const doc = frozen({ metadata: { ownerReferences: [owner('a'), owner('b')] } });
    const applyPatch = frozen({
      metadata: {
        '$setElementOrder/ownerReferences': [{ uid: 'a' }, { uid: 'c' }, { uid: 'b' }],
        ownerReferences: [owner('c')],
      },
    });
    const result = applyStrategicMergePatch(doc, applyPatch, objectMetaSmp) as {
      metadata: { ownerReferences: { uid: string }[] };
    };
    assert.deepEqual(
      result.metadata.ownerReferences.map((o) => o.uid),
      ['a', 'c', 'b'],
    );
  });

  it('reorders with $setElementOrder alone and keeps server-only items near their live neighbours', () => {
    // Upstream case "set elements order in a list with server-only items 3".
    const doc = frozen({
      metadata: { ownerReferences: ['1', '2', '7', '9', '8', '3', '4'].map((u) => ({ uid: u })) },
    });
    const patch = frozen({
      metadata: { '$setElementOrder/ownerReferences': ['2', '1', '4', '3'].map((u) => ({ uid: u })) },
    });
    const result = applyStrategicMergePatch(doc, patch, objectMetaSmp) as {
      metadata: { ownerReferences: { uid: string }[] };
    };
    assert.deepEqual(
      result.metadata.ownerReferences.map((o) => o.uid),
      ['2', '1', '7', '9', '8', '4', '3'],
    );
  });

  it('rejects a $setElementOrder that contradicts the patch list', () => {
    const doc = { metadata: { ownerReferences: [owner('1'), owner('3'), owner('2')] } };
    const patch = {
      metadata: {
        '$setElementOrder/ownerReferences': [{ uid: '1' }, { uid: '2' }, { uid: '3' }],
        ownerReferences: [{ uid: '3', controller: true }, { uid: '1' }],
      },
    };
    assert.throws(() => applyStrategicMergePatch(doc, patch, objectMetaSmp), badRequest);
  });

  it('deletes a merge-keyed item with $patch: delete', () => {
    const doc = frozen({ metadata: { ownerReferences: [owner('a'), owner('b')] } });
    const patch = frozen({ metadata: { ownerReferences: [{ uid: 'a', $patch: 'delete' }] } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, objectMetaSmp), {
      metadata: { ownerReferences: [owner('b')] },
    });
  });

  it('replaces a merge-keyed list with a $patch: replace item', () => {
    const doc = frozen({ metadata: { ownerReferences: [owner('a'), owner('b')] } });
    const patch = frozen({ metadata: { ownerReferences: [{ $patch: 'replace' }, owner('c')] } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, objectMetaSmp), {
      metadata: { ownerReferences: [owner('c')] },
    });
  });

  it('drops $patch: delete items that match nothing, even in an empty list', () => {
    const doc = frozen({ metadata: { ownerReferences: [] as unknown[], finalizers: ['a'] } });
    const patch = frozen({ metadata: { ownerReferences: [{ uid: 'x', $patch: 'delete' }] } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, objectMetaSmp), {
      metadata: { ownerReferences: [], finalizers: ['a'] },
    });
    assert.throws(
      () =>
        applyStrategicMergePatch(
          doc,
          { metadata: { finalizers: [{ $patch: 'delete' }, 'b'] } },
          objectMetaSmp,
        ),
      badRequest,
    );
  });

  it('requires the merge key in every patch item', () => {
    const doc = { metadata: { ownerReferences: [owner('a')] } };
    const patch = { metadata: { ownerReferences: [{ name: 'no-uid' }] } };
    assert.throws(() => applyStrategicMergePatch(doc, patch, objectMetaSmp), badRequest);
    assert.throws(
      () => applyStrategicMergePatch(doc, patch, objectMetaSmp),
      /does not contain declared merge key: uid/,
    );
  });

  it('unions metadata.finalizers and orders them as upstream', () => {
    const doc = frozen({ metadata: { finalizers: ['a', 'b'] } });
    const schema = smpSchemaFor('Secret');
    // Without $setElementOrder new items go ahead of server-only ones; with it, its order wins.
    assert.deepEqual(
      applyStrategicMergePatch(doc, frozen({ metadata: { finalizers: ['c', 'a'] } }), schema),
      {
        metadata: { finalizers: ['c', 'a', 'b'] },
      },
    );
    assert.deepEqual(
      applyStrategicMergePatch(
        doc,
        frozen({ metadata: { '$setElementOrder/finalizers': ['a', 'b', 'c'], finalizers: ['c'] } }),
        schema,
      ),
      { metadata: { finalizers: ['a', 'b', 'c'] } },
    );
  });

  it('keeps the patch order for items the live list already has (upstream "preserve the order from the patch")', () => {
    const doc = frozen({ metadata: { finalizers: ['1', '2', '3'] } });
    assert.deepEqual(
      applyStrategicMergePatch(doc, frozen({ metadata: { finalizers: ['3', '1'] } }), objectMetaSmp),
      {
        metadata: { finalizers: ['2', '3', '1'] },
      },
    );
  });

  it('removes primitives with $deleteFromPrimitiveList', () => {
    const doc = frozen({ metadata: { finalizers: ['a', 'b', 'c'] }, spec: { finalizers: ['x', 'y'] } });
    const patch = frozen({
      metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'missing'] },
      spec: { '$deleteFromPrimitiveList/finalizers': ['x'] },
    });
    // Deletion lists apply to merging and non-merging lists alike, as upstream.
    assert.deepEqual(applyStrategicMergePatch(doc, patch, smpSchemaFor('Namespace')), {
      metadata: { finalizers: ['a', 'c'] },
      spec: { finalizers: ['y'] },
    });
    assert.deepEqual(
      applyStrategicMergePatch(
        { metadata: {} },
        { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } },
        objectMetaSmp,
      ),
      { metadata: {} },
    );
  });

  it('adds and removes finalizers in one patch, as kubectl apply does', () => {
    const doc = frozen({ metadata: { finalizers: ['a', 'b'] } });
    const patch = frozen({
      metadata: {
        '$setElementOrder/finalizers': ['b', 'c'],
        '$deleteFromPrimitiveList/finalizers': ['a'],
        finalizers: ['c'],
      },
    });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, objectMetaSmp), {
      metadata: { finalizers: ['b', 'c'] },
    });
  });

  it('clears fields missing from $retainKeys', () => {
    const doc = frozen({ spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } });
    const patch = frozen({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, {}), { spec: { strategy: { type: 'Recreate' } } });
  });

  it('rejects a patch that sets a field missing from $retainKeys', () => {
    const patch = { spec: { $retainKeys: ['type'], type: 'Recreate', other: 1 } };
    assert.throws(() => applyStrategicMergePatch({ spec: {} }, patch, {}), badRequest);
    assert.throws(
      () => applyStrategicMergePatch({ spec: {} }, { spec: { $retainKeys: 'type' } }, {}),
      badRequest,
    );
  });

  it('replaces a map with $patch: replace', () => {
    const doc = frozen({ data: { a: '1', b: '2' } });
    const patch = frozen({ data: { $patch: 'replace', c: '3' } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, {}), { data: { c: '3' } });
  });

  it('deletes a map with $patch: delete, and empties the document at the root', () => {
    const doc = frozen({ data: { a: '1' }, keep: true });
    assert.deepEqual(applyStrategicMergePatch(doc, frozen({ data: { $patch: 'delete' } }), {}), {
      keep: true,
    });
    assert.deepEqual(applyStrategicMergePatch(doc, frozen({ $patch: 'delete' }), {}), {});
  });

  it('merges explicitly with $patch: merge', () => {
    const doc = frozen({ data: { a: '1' } });
    assert.deepEqual(applyStrategicMergePatch(doc, frozen({ data: { $patch: 'merge', b: '2' } }), {}), {
      data: { a: '1', b: '2' },
    });
  });

  it('never leaves directives in the result, even in values that replace or are new', () => {
    const doc = frozen({ spec: { list: [1] } });
    const patch = frozen({
      spec: {
        list: [{ a: 1, $retainKeys: ['a'] }],
        fresh: { $patch: 'replace', inner: { x: null, y: 1 } },
        gone: { $patch: 'delete' },
      },
      metadata: { ownerReferences: [owner('a'), { uid: 'b', $patch: 'delete' }] },
    });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, objectMetaSmp), {
      spec: { list: [{ a: 1 }], fresh: { inner: { y: 1 } } },
      metadata: { ownerReferences: [owner('a')] },
    });
  });

  it('merges nested merge-keyed lists inside merged items', () => {
    const schema: SmpSchema = {
      'spec.containers': { mergeKey: 'name' },
      'spec.containers.ports': { mergeKey: 'containerPort' },
    };
    const doc = frozen({
      spec: {
        containers: [
          { name: 'app', image: 'a:1', ports: [{ containerPort: 80 }] },
          { name: 'sidecar', image: 's:1' },
        ],
      },
    });
    const patch = frozen({
      spec: { containers: [{ name: 'app', image: 'a:2', ports: [{ containerPort: 443, name: 'https' }] }] },
    });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, schema), {
      spec: {
        containers: [
          {
            name: 'app',
            image: 'a:2',
            ports: [{ containerPort: 443, name: 'https' }, { containerPort: 80 }],
          },
          { name: 'sidecar', image: 's:1' },
        ],
      },
    });
  });

  it('merges ServiceAccount secrets by name but replaces imagePullSecrets, as the upstream Go type does', () => {
    const doc = frozen({
      secrets: [{ name: 'a' }, { name: 'b' }],
      imagePullSecrets: [{ name: 'x' }, { name: 'y' }],
    });
    const patch = frozen({
      '$setElementOrder/secrets': [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
      secrets: [{ name: 'c' }],
      imagePullSecrets: [{ name: 'z' }],
    });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, smpSchemaFor('ServiceAccount')), {
      secrets: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
      imagePullSecrets: [{ name: 'z' }],
    });
  });

  it('merges Namespace status.conditions by type', () => {
    const doc = frozen({
      status: {
        conditions: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'False' },
        ],
      },
    });
    const patch = frozen({ status: { conditions: [{ type: 'B', status: 'True' }] } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, smpSchemaFor('Namespace')), {
      status: {
        conditions: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'True' },
        ],
      },
    });
  });

  it('gives every kind, known or not, the ObjectMeta strategies', () => {
    for (const kind of [
      'Secret',
      'ConfigMap',
      'Namespace',
      'Event',
      'ServiceAccount',
      'Lease',
      'CustomResourceDefinition',
      'Widget',
    ]) {
      const schema = smpSchemaFor(kind);
      assert.deepEqual(schema['metadata.ownerReferences'], { mergeKey: 'uid' }, kind);
      assert.deepEqual(schema['metadata.finalizers'], { merge: 'primitive' }, kind);
    }
    assert.equal(smpSchemaFor('CustomResourceDefinition')['spec.versions'], undefined);
  });

  it('replaces values whose type changed', () => {
    const doc = frozen({ a: [1], b: { x: 1 }, c: 'text' });
    const patch = frozen({ a: { now: 'map' }, b: ['now', 'list'], c: { x: null, y: 2 } });
    assert.deepEqual(applyStrategicMergePatch(doc, patch, {}), {
      a: { now: 'map' },
      b: ['now', 'list'],
      c: { y: 2 },
    });
  });

  it('answers 400 for unknown directives and malformed patches', () => {
    const doc = { data: { a: '1' }, metadata: { finalizers: ['a'], ownerReferences: [owner('a')] } };
    const bad: unknown[] = [
      { metadata: { ownerReferences: [{ uid: 'b', $patch: 'explode' }], other: [{ $patch: 'bogus' }] } },
      { data: { $patch: 'explode' } },
      { data: { $frobnicate: true } },
      { '$setElement/data': [] },
      { metadata: { ownerReferences: [{ uid: 'a', $patch: 'explode' }] } },
      { metadata: { ownerReferences: [{ uid: 'a', $patch: 'merge' }] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      { metadata: { '$setElementOrder/finalizers': 'a' } },
      ['not', 'an', 'object'],
      null,
    ];
    for (const patch of bad) {
      assert.throws(
        () => applyStrategicMergePatch(doc, patch, smpSchemaFor('ConfigMap')),
        badRequest,
        JSON.stringify(patch),
      );
    }
  });

  it('treats the JSON-schema keys $ref and $schema as data, as CRD schemas carry them', () => {
    const result = applyStrategicMergePatch({}, { spec: { $schema: 'x', $ref: '#/y' } }, {});
    assert.deepEqual(result, { spec: { $schema: 'x', $ref: '#/y' } });
  });

  it('does not mutate its inputs and shares nothing with them', () => {
    const doc = frozen({
      metadata: { ownerReferences: [owner('a')], finalizers: ['x'] },
      data: { keep: { n: 1 } },
    });
    const patch = frozen({
      metadata: {
        ownerReferences: [owner('b')],
        '$setElementOrder/finalizers': ['x', 'y'],
        finalizers: ['y'],
      },
      data: { added: { list: [1] } },
    });
    const result = applyStrategicMergePatch(doc, patch, objectMetaSmp) as {
      data: { keep: { n: number }; added: { list: number[] } };
    };
    result.data.keep.n = 2;
    result.data.added.list.push(2);
    assert.equal(doc.data.keep.n, 1);
    assert.deepEqual(patch.data.added.list, [1]);
  });
});
