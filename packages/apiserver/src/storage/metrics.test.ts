import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/apimachinery';
import { registerStorageMetrics } from './metrics.ts';
import { SqliteStorage } from './sqlite.ts';

/** The value of a metric without labels in a text exposition. */
function value(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} in the exposition`);
  return Number(line.slice(name.length + 1));
}

describe('storage metrics', () => {
  it("count the SQLite store's group commits, their writes and the time they took", async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const metrics = new MetricsRegistry();
      registerStorageMetrics(metrics, storage);
      // Three writes of one turn are one group; a write awaited alone after them, another.
      await Promise.all(['a', 'b', 'c'].map((n) => storage.create(`/registry/secrets/default/${n}`, '{}')));
      await storage.create('/registry/secrets/default/d', '{}');
      // A refused write commits nothing and is not counted.
      await assert.rejects(storage.create('/registry/secrets/default/d', '{}'));
      const text = metrics.render();
      assert.equal(value(text, 'certkit_storage_commit_groups_total'), 2);
      assert.equal(value(text, 'certkit_storage_commit_writes_total'), 4);
      assert.ok(value(text, 'certkit_storage_commit_seconds_total') > 0);
    } finally {
      await storage.close();
    }
  });
});
