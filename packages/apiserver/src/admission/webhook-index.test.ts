import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredObject } from '@certkit/apimachinery';
import type { Storage } from '../storage/types.ts';
import { WatchCache } from '../watchcache/cache.ts';
import { indexWebhooks, WebhookIndex } from './webhook-index.ts';

const config = (name: string, hooks: string[]) =>
  ({
    metadata: { name, uid: `uid-${name}` },
    webhooks: hooks.map((h) => ({ name: h })),
  }) as unknown as StoredObject;

describe('the webhook index', () => {
  it('orders configurations by name and webhooks as listed', () => {
    const hooks = indexWebhooks([config('b', ['b1']), config('a', ['a1', 'a2'])]);
    assert.deepEqual(
      hooks.map((h) => [h.configuration, h.hook.name, h.key]),
      [
        ['a', 'a1', 'uid-a/0'],
        ['a', 'a2', 'uid-a/1'],
        ['b', 'b1', 'uid-b/0'],
      ],
    );
  });

  it('reads storage, and is not empty, while its cache has not listed once (a server starting)', async () => {
    // A cache that was never started stays not ready; it never touches its storage.
    const cache = new WatchCache({} as Storage, '/registry/admissionregistration.k8s.io/x/', {}, false);
    const index = new WebhookIndex();
    assert.equal(index.empty, true, 'nothing attached yet');
    let reads = 0;
    index.attach(cache, async () => {
      reads++;
      return [config('only', ['w1'])];
    });
    assert.equal(index.empty, false);
    const listed = index.webhooks();
    assert.ok(listed instanceof Promise);
    assert.deepEqual(
      (await listed).map((h) => h.hook.name),
      ['w1'],
    );
    assert.equal(reads, 1);
  });
});
