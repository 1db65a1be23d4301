import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nameHash, WrittenNames } from './written-names.ts';

describe('WrittenNames', () => {
  it('answers maybe for every name added or rebuilt from, and no for most others', () => {
    const names = new WrittenNames();
    names.rebuild(['/registry/secrets/ns/a', '/registry/secrets/ns/b']);
    names.add('/registry/events/ns/e-1');
    for (const name of ['/registry/secrets/ns/a', '/registry/secrets/ns/b', '/registry/events/ns/e-1']) {
      assert.equal(names.mayHave(name), true, name);
    }
    const others = Array.from({ length: 10_000 }, (_, i) => `/registry/events/ns/other-${i}`);
    // A collision of 30-bit hashes among 10,000 names and 3 written ones is possible, not likely.
    assert.ok(others.filter((name) => names.mayHave(name)).length <= 1);
  });

  it('a rebuild forgets what it is not given, and is due only once the set has grown well past it', () => {
    const names = new WrittenNames();
    names.rebuild(['/registry/a']);
    for (let i = 0; i < 4096; i++) names.add(`/registry/e-${i}`);
    assert.equal(names.rebuildDue, false);
    for (let i = 4096; i < 4200; i++) names.add(`/registry/e-${i}`);
    assert.equal(names.rebuildDue, true);
    names.rebuild(['/registry/a']);
    assert.equal(names.size, 1);
    assert.equal(names.rebuildDue, false);
    assert.equal(names.mayHave('/registry/a'), true);
    assert.equal(names.mayHave('/registry/e-1'), false);
  });

  it('hashes to small integers, code unit by code unit', () => {
    for (const name of ['', 'a', '/registry/secrets/default/x', 'é/ü/名前']) {
      const hash = nameHash(name);
      assert.ok(Number.isInteger(hash) && hash >= 0 && hash < 2 ** 30, name);
    }
    assert.notEqual(nameHash('/registry/a'), nameHash('/registry/b'));
  });
});
