import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListScanner } from './list-scanner.ts';

/** Feeds `body` split into chunks of `size` bytes; returns the items in order and the other fields. */
function scan(body: string, size: number): { items: unknown[]; fields: Record<string, unknown> } {
  const items: unknown[] = [];
  const scanner = new ListScanner((item) => items.push(item));
  const bytes = Buffer.from(body, 'utf8');
  for (let i = 0; i < bytes.length; i += size) scanner.write(bytes.subarray(i, i + size));
  scanner.end();
  return { items, fields: scanner.fields };
}

const tricky = [
  { metadata: { name: 'quote"and\\backslash', annotations: { a: '}]{["' } }, data: { k: 'v\\"' } },
  { metadata: { name: 'unicode-é-日本-🙂' }, nested: [[1, [2, { x: ']' }]], {}], empty: '' },
  { metadata: { name: 'escapes' }, s: '\\\\', t: '\\"\\\\"', u: '\u0000\n\t' },
];

describe('ListScanner', () => {
  for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
    it(`finds every item with metadata before items, in ${size}-byte chunks`, () => {
      const body = JSON.stringify({
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '42', continue: 'tok"en]' },
        items: tricky,
      });
      const { items, fields } = scan(body, size);
      assert.deepEqual(items, tricky);
      assert.deepEqual(fields.metadata, { resourceVersion: '42', continue: 'tok"en]' });
      assert.equal(fields.kind, 'ConfigMapList');
    });
  }

  it('parses metadata that comes after items, with whitespace everywhere', () => {
    const body = ` {\n "items" : [ ${tricky.map((t) => JSON.stringify(t, null, 2)).join(' ,\n ')} ] ,\r\n\t"metadata" : {"resourceVersion":"7"} , "kind":"List" } \n`;
    const { items, fields } = scan(body, 1);
    assert.deepEqual(items, tricky);
    assert.deepEqual(fields.metadata, { resourceVersion: '7' });
  });

  it('handles empty and null items, and scalar elements', () => {
    assert.deepEqual(scan('{"items":[],"metadata":{}}', 1).items, []);
    const nul = scan('{"metadata":{"resourceVersion":"1"},"items":null}', 1);
    assert.deepEqual(nul.items, []);
    assert.equal(nul.fields.items, null);
    assert.deepEqual(scan('{"items":[1, -2.5e3,true ,null,"s\\"]"],"n":12}', 1).items, [
      1,
      -2500,
      true,
      null,
      's"]',
    ]);
    assert.equal(scan('{"n":12,"items":[]}', 1).fields.n, 12);
  });

  it('hands each item over as soon as its closing bracket arrives', () => {
    const seen: string[] = [];
    const scanner = new ListScanner((item) =>
      seen.push((item as { metadata: { name: string } }).metadata.name),
    );
    scanner.write('{"metadata":{},"items":[{"metadata":{"name":"a"}}');
    assert.deepEqual(seen, ['a']);
    scanner.write(',{"metadata":{"name":"b"}');
    assert.deepEqual(seen, ['a']);
    scanner.write('}]}');
    assert.deepEqual(seen, ['a', 'b']);
    scanner.end();
    assert.equal(scanner.itemCount, 2);
  });

  it('rejects a truncated body, a non-object and trailing data', () => {
    const truncated = new ListScanner(() => {});
    truncated.write('{"items":[{"a":1}');
    assert.throws(() => truncated.end(), /ended before its closing brace/);
    assert.throws(() => new ListScanner(() => {}).write('[1,2]'), /not a JSON object/);
    const trailing = new ListScanner(() => {});
    assert.throws(() => trailing.write('{"items":[]} x'), /unexpected data/);
    assert.throws(() => new ListScanner(() => {}).write('{"items":[{"a":tru}]}'), SyntaxError);
  });

  it('propagates an exception thrown by onItem', () => {
    const scanner = new ListScanner(() => {
      throw new Error('stop');
    });
    assert.throws(() => scanner.write('{"items":[{}]}'), /stop/);
  });

  it('decodes a large list the same as JSON.parse', () => {
    const list = {
      kind: 'SecretList',
      metadata: { resourceVersion: '99' },
      items: Array.from({ length: 3000 }, (_, i) => ({
        metadata: { name: `s-${i}`, labels: { i: String(i) } },
        data: { 'tls.crt': Buffer.alloc(200, i).toString('base64') },
      })),
    };
    const { items, fields } = scan(JSON.stringify(list), 16 * 1024 + 3);
    assert.deepEqual(items, list.items);
    assert.deepEqual(fields.metadata, list.metadata);
  });
});
