/**
 * The webhooks of every Mutating- or ValidatingWebhookConfiguration, in call order (configurations by name,
 * hooks in list order), read from the configurations' watch cache: rebuilt only when the cache's revision
 * moved, so that a write asks storage nothing, and a server without configurations pays one size check.
 */

import type { StoredObject } from '@certkit/apimachinery';
import type { WatchCache } from '../watchcache/cache.ts';
import type { Webhook } from './webhook-types.ts';

export interface IndexedWebhook {
  hook: Webhook;
  /** The configuration's name, for logs. */
  configuration: string;
  /** Stable for one stored webhook (configuration uid and index): the reinvocation bookkeeping's key. */
  key: string;
}

export class WebhookIndex {
  private cache: WatchCache | undefined;
  private readStorage: (() => Promise<StoredObject[]>) | undefined;
  private revision = -1;
  private hooks: IndexedWebhook[] = [];

  /**
   * Reads from this cache from now on (the server's, or one of the chain's own when caching is off); until
   * the cache has listed storage once, from storage itself (readStorage), so that webhooks configured before
   * a restart are not skipped while the server starts.
   */
  attach(cache: WatchCache, readStorage: () => Promise<StoredObject[]>): void {
    this.cache = cache;
    this.readStorage = readStorage;
    this.revision = -1;
  }

  /** True when no webhook can apply: nothing configured, as far as a ready cache knows. */
  get empty(): boolean {
    const cache = this.cache;
    return cache === undefined || (cache.size === 0 && cache.ready.ready);
  }

  webhooks(): IndexedWebhook[] | Promise<IndexedWebhook[]> {
    const cache = this.cache;
    if (!cache) return [];
    if (!cache.ready.ready) return this.readStorage!().then(indexWebhooks);
    if (cache.size === 0) return [];
    if (cache.revision !== this.revision) {
      this.revision = cache.revision;
      this.hooks = indexWebhooks(cache.list(undefined).map((entry) => entry.obj));
    }
    return this.hooks;
  }
}

/** The webhooks of the configurations, configurations sorted by name (cache lists are sorted by key). */
export function indexWebhooks(configurations: StoredObject[]): IndexedWebhook[] {
  const hooks: IndexedWebhook[] = [];
  const sorted = [...configurations].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  for (const config of sorted) {
    const list = Array.isArray(config.webhooks) ? (config.webhooks as Webhook[]) : [];
    list.forEach((hook, i) =>
      hooks.push({ hook, configuration: config.metadata.name!, key: `${config.metadata.uid}/${i}` }),
    );
  }
  return hooks;
}
