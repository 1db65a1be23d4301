import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ApplySchema } from './apply-schema.ts';
import { decodeFieldsV1, encodeFieldsV1, FieldSet, type Path, toFieldSet } from './field-set.ts';
import { merge, removePaths } from './structured-merge.ts';

const ports: ApplySchema = {
  listType: 'map',
  listMapKeys: ['name'],
  items: { properties: { name: {}, port: {}, tags: { listType: 'set' } } },
};
const schema: ApplySchema = {
  properties: { spec: { properties: { ports, tags: { listType: 'set' }, labels: { additional: {} } } } },
};

const keysOf = (set: FieldSet) => [...set.paths.values()].map((p) => p.join(' ')).sort();
const k = (name: string) => `k:{"name":"${name}"}`;

/**
 * Bound of the cost ratio between 10 times the size and the size. Linear code measures 10 to 30 here (the
 * heap grows, and with it allocation and collection costs); quadratic code ~100.
 */
const MAX_RATIO = 40;

/** CPU ms of `op`, the cheapest of three runs. */
function cpuMs(op: () => void): number {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const cpu = process.cpuUsage();
    op();
    const used = process.cpuUsage(cpu);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

describe('FieldSet', () => {
  const a = FieldSet.of([['f:a'], ['f:b', 'f:c'], ['f:b', 'f:d', 'f:e']]);
  const b = FieldSet.of([['f:b', 'f:c'], ['f:x']]);

  it('unites, subtracts, intersects and filters by path', () => {
    assert.deepEqual(keysOf(a.union(b)), ['f:a', 'f:b f:c', 'f:b f:d f:e', 'f:x']);
    assert.deepEqual(keysOf(a.difference(b)), ['f:a', 'f:b f:d f:e']);
    assert.deepEqual(keysOf(a.intersection(b)), ['f:b f:c']);
    assert.deepEqual(keysOf(a.filter((p) => p.length > 1)), ['f:b f:c', 'f:b f:d f:e']);
    assert.deepEqual(keysOf(a.filter((_, key) => key.startsWith('f:b\u0000f:d'))), ['f:b f:d f:e']);
    assert.ok(a.union(b).equals(b.union(a)));
    assert.ok(!a.equals(b));
  });

  it('knows which paths have members strictly below them, also after an insert', () => {
    const set = FieldSet.of(a.paths.values());
    assert.ok(set.hasBelow(['f:b']));
    assert.ok(set.hasBelow(['f:b', 'f:d']));
    assert.ok(!set.hasBelow(['f:b', 'f:c']), 'a member is not below itself');
    assert.ok(!set.hasBelow(['f:a']));
    assert.ok(!set.hasBelow(['f:x']));
    set.insert(['f:a', 'f:y']);
    assert.ok(set.hasBelow(['f:a']), 'the index follows inserts');
  });

  it('answers hasBelow for every member of a large set in linear time', () => {
    const paths = (n: number): Path[] => Array.from({ length: n }, (_, i) => ['f:data', `f:key-${i}`]);
    const cost = (n: number) => {
      const all = paths(n);
      return cpuMs(() => {
        const set = FieldSet.of(all);
        for (const p of all) assert.ok(!set.hasBelow(p));
        encodeFieldsV1(set);
      });
    };
    cost(100);
    const ratio = cost(50_000) / cost(5_000);
    assert.ok(ratio < MAX_RATIO, `ratio ${ratio.toFixed(1)}`);
  });
});

describe('FieldsV1', () => {
  it('marks members with members below by ".", sorted as kube writes them', () => {
    const set = FieldSet.of([['f:spec', 'f:b'], ['f:spec'], ['f:spec', 'f:a', 'f:z'], ['f:meta']]);
    const encoded = encodeFieldsV1(set);
    assert.deepEqual(encoded, { 'f:meta': {}, 'f:spec': { '.': {}, 'f:a': { 'f:z': {} }, 'f:b': {} } });
    assert.deepEqual(Object.keys(encoded['f:spec'] as object), ['.', 'f:a', 'f:b']);
    assert.ok(decodeFieldsV1(encoded).equals(set));
  });

  it('takes the fields of a configuration, list-maps by key and sets by value', () => {
    const config = { spec: { ports: [{ name: 'http', port: 80, tags: ['a'] }], tags: ['x'], labels: {} } };
    assert.deepEqual(keysOf(toFieldSet(config, schema)), [
      `f:spec f:labels`,
      `f:spec f:ports ${k('http')}`,
      `f:spec f:ports ${k('http')} f:name`,
      `f:spec f:ports ${k('http')} f:port`,
      `f:spec f:ports ${k('http')} f:tags v:"a"`,
      'f:spec f:tags v:"x"',
    ]);
  });
});

describe('merge of a list-map', () => {
  const list = (...names: string[]) => ({ spec: { ports: names.map((name) => ({ name })) } });
  const names = (obj: unknown) =>
    ((obj as { spec: { ports: { name: string }[] } }).spec.ports ?? []).map((p) => p.name);

  it('puts new items after the configuration’s previous item, in its order', () => {
    assert.deepEqual(names(merge(list('a', 'b', 'c'), list('a', 'n1', 'n2', 'c', 'n3'), schema)), [
      'a',
      'n1',
      'n2',
      'b',
      'c',
      'n3',
    ]);
  });

  it('puts new items the configuration starts with before the first live item it shares', () => {
    assert.deepEqual(names(merge(list('x', 'b', 'a'), list('n0', 'a', 'b'), schema)), ['x', 'n0', 'b', 'a']);
    assert.deepEqual(names(merge(list('x', 'y'), list('n0', 'n1'), schema)), ['x', 'y', 'n0', 'n1']);
  });

  it('merges shared items member by member and keeps live items the configuration omits', () => {
    const live = {
      spec: {
        ports: [
          { name: 'a', port: 1, tags: ['t'] },
          { name: 'b', port: 2 },
        ],
      },
    };
    const merged = merge(live, { spec: { ports: [{ name: 'a', port: 10, tags: ['u'] }] } }, schema);
    assert.deepEqual(merged, {
      spec: {
        ports: [
          { name: 'a', port: 10, tags: ['t', 'u'] },
          { name: 'b', port: 2 },
        ],
      },
    });
  });

  it('merges 40,000 items in linear time', () => {
    const sized = (n: number, value: string) => ({
      spec: { ports: Array.from({ length: n }, (_, i) => ({ name: `p${i}`, port: value })) },
    });
    const cost = (n: number) => {
      const live = sized(n, 'old');
      // Every other item new, interleaved with the live ones.
      const config = {
        spec: {
          ports: sized(2 * n, 'new').spec.ports.map((p, i) =>
            i % 2 ? { ...p, name: `q${i}` } : { ...p, name: `p${i / 2}` },
          ),
        },
      };
      return cpuMs(() => assert.equal(names(merge(live, config, schema)).length, 2 * n));
    };
    cost(100);
    const ratio = cost(20_000) / cost(2_000);
    assert.ok(ratio < MAX_RATIO, `ratio ${ratio.toFixed(1)}`);
  });
});

describe('removePaths', () => {
  const live = () => ({
    spec: {
      ports: [
        { name: 'a', port: 1, tags: ['x'] },
        { name: 'b', port: 2 },
      ],
      tags: ['t'],
      labels: { l: '1' },
    },
  });

  it('removes fields, list-map items and set values; missing paths are ignored', () => {
    const obj = live();
    removePaths(
      obj,
      [
        ['f:spec', 'f:ports', k('b')],
        ['f:spec', 'f:ports', k('a'), 'f:port'],
        ['f:spec', 'f:ports', k('zz'), 'f:port'],
        ['f:spec', 'f:labels', 'f:nope'],
      ],
      schema,
    );
    assert.deepEqual(obj.spec.ports, [{ name: 'a', tags: ['x'] }]);
    assert.deepEqual(obj.spec.labels, { l: '1' });
  });

  it('drops a list or map it leaves empty, below the top level, when dropEmpty agrees', () => {
    const paths: Path[] = [
      ['f:spec', 'f:ports', k('a'), 'f:tags', 'v:"x"'],
      ['f:spec', 'f:tags', 'v:"t"'],
      ['f:spec', 'f:labels', 'f:l'],
    ];
    const kept = live();
    removePaths(kept, paths, schema);
    assert.deepEqual(kept.spec, {
      ports: [
        { name: 'a', port: 1, tags: [] },
        { name: 'b', port: 2 },
      ],
      tags: [],
      labels: {},
    });
    const dropped = live();
    const owned = ['f:spec\u0000f:labels'];
    removePaths(dropped, paths, schema, (p) => !owned.includes(p.join('\u0000')));
    assert.deepEqual(dropped.spec, {
      ports: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2 },
      ],
      labels: {},
    });
    const all = live();
    removePaths(all, [...paths, ['f:spec', 'f:ports']], schema, () => true);
    assert.deepEqual(all, { spec: {} }, 'spec itself is at the top level and stays');
  });

  it('removes every item of a 50,000-item list in linear time', () => {
    const cost = (n: number) => {
      const paths: Path[] = Array.from({ length: n }, (_, i) => ['f:spec', 'f:ports', k(`p${i}`)]);
      return cpuMs(() => {
        const obj = { spec: { ports: Array.from({ length: n }, (_, i) => ({ name: `p${i}` })) } };
        removePaths(obj, paths, schema, () => false);
        assert.deepEqual(obj.spec.ports, []);
      });
    };
    cost(100);
    const ratio = cost(50_000) / cost(5_000);
    assert.ok(ratio < MAX_RATIO, `ratio ${ratio.toFixed(1)}`);
  });
});
