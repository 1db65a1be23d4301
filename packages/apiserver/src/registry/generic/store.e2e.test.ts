import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseListOptions, type StatusError, type StoredObject } from '@certkit/apimachinery';
import { SqliteStorage } from '../../storage/sqlite.ts';
import { Registry } from '../registry.ts';

/** The generic store over SQLite, whose writes commit in groups (one per turn of the event loop). */

function configMaps(storage: SqliteStorage) {
  const store = new Registry({ storage }).byResource('', 'configmaps');
  assert.ok(store);
  return store;
}

describe('ObjectStore over grouped commits', () => {
  it('applies updates of one object started in the same turn one after the other, none refused', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const store = configMaps(storage);
      await store.create('default', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c' },
        data: {},
      });
      // All start before any commits: every one but the first conflicts with a write still in the group,
      // and its retry must wait for that write instead of failing.
      const updated = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          // As a patch: without a resourceVersion of its own, so that conflicts are retried.
          store.guaranteedUpdate('default', 'c', (current) => ({
            ...current,
            metadata: { ...current.metadata, resourceVersion: undefined },
            data: { ...(current.data as Record<string, string>), [`k${i}`]: String(i) },
          })),
        ),
      );
      assert.equal(new Set(updated.map((o) => o.metadata.resourceVersion)).size, 8);
      const final = await store.get('default', 'c');
      assert.equal(Object.keys(final.data as object).length, 8);
    } finally {
      await storage.close();
    }
  });

  it('answers an update that changes nothing with the stored object, and writes nothing', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const store = configMaps(storage);
      const created = await store.create(
        'default',
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'same', labels: { a: 'b' } },
          data: { x: 'y' },
        },
        { inputOwned: true },
      );
      const revision = await storage.currentRevision();
      const body = JSON.parse(JSON.stringify(created)) as StoredObject;
      const again = await store.update('default', 'same', body, { inputOwned: true });
      assert.equal(again.metadata.resourceVersion, created.metadata.resourceVersion);
      assert.deepEqual(again, created);
      assert.equal(await storage.currentRevision(), revision);
    } finally {
      await storage.close();
    }
  });

  it('does not change the objects callers pass in unless they hand them over', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const store = configMaps(storage);
      const input = Object.freeze({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: Object.freeze({ name: 'kept' }),
        data: Object.freeze({ x: 'y' }),
      });
      const created = await store.create('default', input);
      assert.deepEqual(input, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kept' },
        data: { x: 'y' },
      });
      assert.notEqual(created, input);
      const deleted = await store.delete('default', 'kept');
      assert.equal(deleted.metadata.name, 'kept');
    } finally {
      await storage.close();
    }
  });
});

describe('streamed lists (listPaged) at a resourceVersion not written yet', () => {
  it('answer 504 "Too large resource version" after the wait, as list() does, not a storage error', async () => {
    const storage = SqliteStorage.open(':memory:');
    try {
      const store = configMaps(storage);
      await store.create('default', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c' },
        data: {},
      });
      for (const query of [
        'resourceVersionMatch=Exact&resourceVersion=99999999999',
        'resourceVersionMatch=Exact&resourceVersion=99999999999&fieldSelector=metadata.name%3Dc',
      ]) {
        await assert.rejects(
          store.listPaged('default', parseListOptions(new URLSearchParams(query), 'list')),
          (err: StatusError) =>
            err.code === 504 &&
            err.status.details?.causes?.[0]?.reason === 'ResourceVersionTooLarge' &&
            /^Timeout: Too large resource version: 99999999999, current: \d+$/.test(err.status.message ?? ''),
          query,
        );
      }
    } finally {
      await storage.close();
    }
  });
});
