import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredObject } from '@certkit/apimachinery';
import {
  parseMetadataBytes,
  withResourceVersion,
  withResourceVersionLastBytes,
  withResourceVersionParts,
} from './stored-json.ts';

/**
 * Splicing the resourceVersion into stored bytes gives exactly JSON.stringify of the decoded object, which
 * is what lists from storage sent before they were streamed: for tricky metadata, and for random objects.
 */

/** A stored value as ObjectStore.encode writes it: apiVersion, kind, metadata first, no resourceVersion. */
function stored(obj: Record<string, unknown>): string {
  const { apiVersion, kind, metadata, ...rest } = obj;
  return JSON.stringify({ apiVersion, kind, metadata, ...rest });
}

/** ObjectStore.decode, serialised: the bytes a list from storage held for each object. */
function decodedJson(value: string, revision: number): string {
  const obj = JSON.parse(value) as StoredObject;
  obj.metadata.resourceVersion = String(revision);
  return JSON.stringify(obj);
}

function spliced(value: string, revision: number): string | undefined {
  const parts = withResourceVersionLastBytes(Buffer.from(value), revision);
  return parts && Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString();
}

const TRICKY: Record<string, unknown>[] = [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { x: '}' } },
  {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: {
      name: 'web',
      namespace: 'default',
      labels: { 'app.kubernetes.io/name': 'x' },
      annotations: { brackets: '{"a": ["}", "]", "\\"}"]}', quote: '"', backslash: '\\', tail: '\\"' },
      managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': { '.': {}, 'f:dnsNames': {} } } }],
      finalizers: ['a/b'],
    },
    spec: { dnsNames: ['é.example', '漢字.example', '😀'] },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'n', 1: 'integer-like key', b: 2 },
    data: { 2: 'x' },
  },
  { apiVersion: 'v\\"1', kind: 'K\\"ind', metadata: { name: '\u2028\u0000\ud800' } },
];

/** A small deterministic generator of JSON values: strings with escapes and multi-byte text, nesting. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

function value(rand: () => number, depth: number): unknown {
  const r = rand();
  const text = () =>
    Array.from(
      { length: Math.floor(rand() * 8) },
      () => '{}[]",:\\é漢😀\n\u0001a1 '[Math.floor(rand() * 17)],
    ).join('');
  if (depth > 3 || r < 0.3) return text();
  if (r < 0.4) return Math.floor(rand() * 1e6) / (rand() < 0.5 ? 1 : 7);
  if (r < 0.45) return rand() < 0.5;
  if (r < 0.5) return null;
  if (r < 0.7) return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1));
  return Object.fromEntries(
    Array.from({ length: Math.floor(rand() * 4) }, () => [text(), value(rand, depth + 1)]),
  );
}

describe('stored JSON with the resourceVersion spliced in', () => {
  it('from bytes: the same as JSON.stringify of the decoded object, for tricky metadata', () => {
    for (const obj of TRICKY) {
      const v = stored(obj);
      assert.equal(spliced(v, 42), decodedJson(v, 42), v);
      assert.deepEqual(parseMetadataBytes(Buffer.from(v)), JSON.parse(v).metadata);
    }
  });

  it('from bytes: the same for 500 random objects', () => {
    const rand = random(20);
    let compared = 0;
    for (let i = 0; i < 500; i++) {
      const metadata = { name: `n${i}`, ...(value(rand, 1) as object) };
      delete (metadata as { resourceVersion?: unknown }).resourceVersion;
      const v = stored({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: value(rand, 0) });
      const expected = decodedJson(v, i + 1);
      const got = spliced(v, i + 1);
      // A metadata that mentions "resourceVersion": anywhere is left to decoding.
      if (got === undefined) assert.ok(v.includes('"resourceVersion":'), v);
      else {
        assert.equal(got, expected, v);
        compared++;
      }
    }
    assert.ok(compared > 450, `${compared}`);
  });

  it('leaves other layouts, and metadata naming a resourceVersion, to decoding', () => {
    assert.equal(spliced('{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}', 1), undefined);
    assert.equal(
      spliced('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"3"}}', 1),
      undefined,
    );
    assert.equal(spliced('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"', 1), undefined);
    assert.equal(parseMetadataBytes(Buffer.from('{"metadata":{}}')), undefined);
  });

  it('in parts from text: the same as withResourceVersion', () => {
    for (const obj of TRICKY) {
      const v = stored(obj);
      assert.equal(withResourceVersionParts(v, 7)?.join(''), withResourceVersion(v, 7));
    }
  });
});
