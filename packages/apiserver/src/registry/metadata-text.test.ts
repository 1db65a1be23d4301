import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toPartialObjectMetadata } from '@certkit/apimachinery';
import {
  metadataEnd,
  metadataJson,
  parseMetadata,
  partialObjectMetadataParts,
  sameMetadataAs,
} from './metadata-text.ts';
import { partialObjectMetadataBytes } from './stored-json.ts';

/** A value as the store writes it: apiVersion, kind and metadata first, serialised by JSON.stringify. */
function stored(metadata: Record<string, unknown>, rest: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata, ...rest });
}

describe('metadataJson and parseMetadata', () => {
  it('cut out exactly the metadata JSON.parse finds', () => {
    const metadatas: Record<string, unknown>[] = [
      {},
      { name: 'a' },
      { name: 'a', namespace: 'b', uid: 'u-1', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z' },
      {
        name: 'with "quotes" and \\ backslashes }]{[',
        labels: { 'app.kubernetes.io/name': 'x', empty: '' },
        annotations: { note: 'a "quoted" {json: [1, 2]} in a string \\', other: '\n\t\u2028ü' },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            name: 's',
            uid: 'u',
            controller: true,
            blockOwnerDeletion: false,
          },
        ],
        finalizers: ['a', 'b/c'],
        deletionTimestamp: '2026-01-01T00:00:00Z',
        deletionGracePeriodSeconds: 0,
      },
      { 'key "with" quotes': 1, 'back\\slash': -2.5e-3, nested: { deep: [[], {}, [null, true, false]] } },
    ];
    for (const metadata of metadatas) {
      const value = stored(metadata, { spec: { metadata: { name: 'nested, not the object' } }, data: 'x' });
      assert.equal(metadataJson(value), JSON.stringify(metadata));
      assert.deepEqual(parseMetadata(value), metadata);
    }
  });

  it('leaves values laid out otherwise to a whole parse', () => {
    const reordered = JSON.stringify({ spec: { metadata: { name: 'nested' } }, metadata: { name: 'a' } });
    assert.equal(metadataJson(reordered), undefined);
    assert.deepEqual(parseMetadata(reordered), { name: 'a' });
    const kindFirst = JSON.stringify({ kind: 'Widget', apiVersion: 'v1', metadata: { name: 'b' } });
    assert.equal(metadataJson(kindFirst), undefined);
    assert.deepEqual(parseMetadata(kindFirst), { name: 'b' });
    assert.equal(metadataJson('{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"'), undefined);
    assert.equal(metadataJson('{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a}}'), undefined);
  });
});

describe('sameMetadataAs', () => {
  const meta = { name: 'a', annotations: { note: 'ends with a brace }' } };
  const value = stored(meta, { status: { ready: true } });

  it('is true when the other value has the same metadata, whatever follows it', () => {
    for (const rest of [{}, { status: { ready: false } }, { spec: { x: 1 } }]) {
      const other = stored(meta, rest);
      assert.equal(sameMetadataAs(value, metadataJson(value)!, other), true);
      assert.equal(metadataJson(other), metadataJson(value));
    }
  });

  it('is false when the metadata differs, even by a prefix of it', () => {
    for (const other of [
      stored({ name: 'a' }, { status: { ready: true } }),
      stored({ name: 'a', annotations: { note: 'ends with a brace }', more: 'x' } }),
      stored({ ...meta, labels: { a: 'b' } }),
      stored({ name: 'b', annotations: meta.annotations }),
    ]) {
      assert.equal(sameMetadataAs(value, metadataJson(value)!, other), false);
      assert.notEqual(metadataJson(other), metadataJson(value));
    }
  });

  it('is false for another head: it vouches for no more than it compared', () => {
    const other = JSON.stringify({ apiVersion: 'example.com/v2', kind: 'Widget', metadata: meta });
    assert.equal(sameMetadataAs(value, metadataJson(value)!, other), false);
  });
});

describe('partialObjectMetadataParts and partialObjectMetadataBytes', () => {
  /** What the server wrote before: the decoded object (resourceVersion appended) as PartialObjectMetadata. */
  function decodedAsPartial(value: string, revision: number): string {
    const obj = JSON.parse(value) as { metadata: Record<string, unknown> };
    obj.metadata.resourceVersion = String(revision);
    return JSON.stringify(toPartialObjectMetadata(obj));
  }

  it('give the bytes of the decoded object as PartialObjectMetadata, without parsing it', () => {
    const metadatas: Record<string, unknown>[] = [
      {},
      { name: 'a', namespace: 'b', uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z' },
      {
        name: 'x',
        labels: { '1': 'integer-like key', 'controller.cert-manager.io/fao': 'true' },
        annotations: { note: 'a "quoted" {json: [1, "}"]} \\ in a string', other: '\n\t\u2028ü漢' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u', controller: true }],
        finalizers: ['a'],
        managedFields: [{ manager: 'm', fieldsV1: { 'f:data': {} } }],
      },
    ];
    for (const metadata of metadatas) {
      const value = stored(metadata, { data: { 'tls.crt': 'x'.repeat(5000) }, spec: { metadata: {} } });
      const expected = decodedAsPartial(value, 42);
      const parts = partialObjectMetadataParts(value, metadataEnd(value), 42);
      assert.ok(parts);
      assert.equal(parts.join(''), expected);
      const bytes = partialObjectMetadataBytes(Buffer.from(value), 42);
      assert.ok(bytes);
      assert.equal(Buffer.concat(bytes.map((p) => Buffer.from(p))).toString(), expected);
    }
  });

  it('decline a value laid out otherwise, or whose metadata names a resourceVersion', () => {
    const otherOrder = JSON.stringify({ kind: 'Widget', apiVersion: 'v1', metadata: { name: 'a' } });
    assert.equal(metadataEnd(otherOrder), -1);
    assert.equal(partialObjectMetadataParts(otherOrder, -1, 1), undefined);
    assert.equal(partialObjectMetadataBytes(Buffer.from(otherOrder), 1), undefined);
    const named = stored({ name: 'a', resourceVersion: '7' });
    assert.equal(partialObjectMetadataParts(named, metadataEnd(named), 1), undefined);
    assert.equal(partialObjectMetadataBytes(Buffer.from(named), 1), undefined);
    // Named only later in the object, not in its metadata: still cut out.
    const later = stored({ name: 'a' }, { spec: { resourceVersion: '7' } });
    assert.equal(
      partialObjectMetadataParts(later, metadataEnd(later), 1)?.join(''),
      decodedAsPartial(later, 1),
    );
  });
});
