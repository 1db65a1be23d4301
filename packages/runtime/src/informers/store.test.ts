import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { Indexer, keyFor, NAMESPACE_INDEX, objectKey, splitKey } from './store.ts';

const obj = (namespace: string | undefined, name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  ...extra,
  metadata: { namespace, name, resourceVersion: '1', ...(extra.metadata ?? {}) },
});

describe('Indexer', () => {
  it('keys namespaced objects as namespace/name and cluster-scoped ones as name', () => {
    assert.equal(objectKey(obj('ns1', 'a')), 'ns1/a');
    assert.equal(objectKey(obj(undefined, 'node-1')), 'node-1');
    assert.equal(keyFor('', 'x'), 'x');
    assert.deepEqual(splitKey('ns/x'), { namespace: 'ns', name: 'x' });
    assert.deepEqual(splitKey('x'), { namespace: '', name: 'x' });
  });

  it('adds, updates, gets, lists and deletes', () => {
    const store = new Indexer();
    const a = obj('ns1', 'a');
    assert.equal(store.add(a), undefined);
    const a2 = obj('ns1', 'a', { metadata: { resourceVersion: '2' } });
    assert.equal(store.update(a2), a);
    assert.equal(store.get('ns1/a'), a2);
    store.add(obj('ns2', 'b'));
    assert.deepEqual(store.listKeys().sort(), ['ns1/a', 'ns2/b']);
    assert.equal(store.delete('ns1/a'), a2);
    assert.equal(store.delete('ns1/a'), undefined);
    assert.equal(store.size, 1);
  });

  it('indexes by namespace out of the box', () => {
    const store = new Indexer();
    store.add(obj('ns1', 'a'));
    store.add(obj('ns1', 'b'));
    store.add(obj('ns2', 'c'));
    store.add(obj(undefined, 'cluster'));
    assert.deepEqual(
      store
        .byIndex(NAMESPACE_INDEX, 'ns1')
        .map((o) => o.metadata?.name)
        .sort(),
      ['a', 'b'],
    );
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, '').map(objectKey), ['cluster']);
    assert.deepEqual(store.listIndexFuncValues(NAMESPACE_INDEX).sort(), ['', 'ns1', 'ns2']);
    store.delete('ns2/c');
    // Empty index entries are dropped, so a churning value space does not leak.
    assert.deepEqual(store.listIndexFuncValues(NAMESPACE_INDEX).sort(), ['', 'ns1']);
  });

  it('re-indexes existing objects when indexers are added later', () => {
    const store = new Indexer();
    store.add(obj('ns1', 'a', { type: 'x' }));
    store.add(obj('ns1', 'b', { type: 'y' }));
    store.addIndexers({ byType: (o) => [String(o.type)] });
    assert.deepEqual(store.indexKeys('byType', 'x'), ['ns1/a']);
    store.add(obj('ns1', 'a', { type: 'y' }));
    assert.deepEqual(store.indexKeys('byType', 'x'), []);
    assert.deepEqual(store.indexKeys('byType', 'y').sort(), ['ns1/a', 'ns1/b']);
  });

  it('refuses a second indexer of the same name', () => {
    const store = new Indexer();
    store.addIndexers({ foo: () => [] });
    assert.throws(() => store.addIndexers({ foo: () => [] }), { message: 'indexer conflict: foo' });
    assert.throws(() => store.addIndexers({ [NAMESPACE_INDEX]: () => [] }), {
      message: 'indexer conflict: namespace',
    });
  });

  it("fails on unknown indices with client-go's message", () => {
    const store = new Indexer();
    assert.throws(() => store.byIndex('field:spec.x', 'v'), {
      message: 'Index with name field:spec.x does not exist',
    });
  });

  it('does not alias what index functions return, nor its own structures', () => {
    const shared = ['v1'];
    const store = new Indexer({ shared: () => shared });
    store.add(obj('ns', 'a'));
    shared.push('v2');
    assert.deepEqual(store.listIndexFuncValues('shared'), ['v1']);
    const listed = store.list();
    listed.pop();
    assert.equal(store.size, 1);
    const keys = store.indexKeys('shared', 'v1');
    keys.pop();
    assert.deepEqual(store.indexKeys('shared', 'v1'), ['ns/a']);
  });

  it('multiple index values mean any of them, duplicates count once', () => {
    const store = new Indexer({ tags: (o) => (o.metadata?.labels?.tags ?? '').split('.') });
    store.add(obj('ns', 'a', { metadata: { labels: { tags: 'x.y.x' } } }));
    assert.deepEqual(store.indexKeys('tags', 'x'), ['ns/a']);
    assert.deepEqual(store.indexKeys('tags', 'y'), ['ns/a']);
    assert.deepEqual(store.listIndexFuncValues('tags').sort(), ['x', 'y']);
  });

  it('holds one object per index value alone and more in a set, both ways, through updates and deletes', () => {
    const secret = (o: KubeObject) => [o.metadata?.labels?.secret ?? ''];
    const store = new Indexer({ secret });
    const withSecret = (name: string, value: string) =>
      obj('ns', name, { metadata: { labels: { secret: value } } });
    store.add(withSecret('a', 's1'));
    store.add(withSecret('a', 's1'));
    assert.deepEqual(store.indexKeys('secret', 's1'), ['ns/a']);
    store.add(withSecret('b', 's1'));
    store.add(withSecret('c', 's1'));
    assert.deepEqual(store.indexKeys('secret', 's1').sort(), ['ns/a', 'ns/b', 'ns/c']);
    store.delete('ns/a');
    store.update(withSecret('c', 's2'));
    assert.deepEqual(store.indexKeys('secret', 's1'), ['ns/b']);
    assert.deepEqual(store.byIndex('secret', 's2').map(objectKey), ['ns/c']);
    store.add(withSecret('d', 's1'));
    assert.deepEqual(store.byIndex('secret', 's1').map(objectKey).sort(), ['ns/b', 'ns/d']);
    store.delete('ns/b');
    store.delete('ns/d');
    store.delete('ns/nope');
    assert.deepEqual(store.listIndexFuncValues('secret'), ['s2']);
    assert.deepEqual(store.byIndex('secret', 's1'), []);
  });

  it('replace() swaps the contents and rebuilds indices', () => {
    const store = new Indexer();
    store.add(obj('ns1', 'a'));
    store.replace([obj('ns2', 'b'), obj('ns2', 'c')], '42');
    assert.equal(store.resourceVersion, '42');
    assert.deepEqual(store.listKeys().sort(), ['ns2/b', 'ns2/c']);
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'ns1'), []);
    assert.equal(store.byIndex(NAMESPACE_INDEX, 'ns2').length, 2);
  });
});
