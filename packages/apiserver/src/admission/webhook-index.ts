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
  private revision = -1;
  private hooks: IndexedWebhook[] = [];

  /** Reads from this cache from now on (the server's, or one of the chain's own when caching is off). */
  attach(cache: WatchCache): void {
    this.cache = cache;
    this.revision = -1;
  }

  /** True when no webhook can apply: nothing configured (or nothing read yet). */
  get empty(): boolean {
    return this.cache === undefined || this.cache.size === 0;
  }

  /** Whether the cache has listed storage once; before, what it holds says nothing. */
  get ready(): boolean {
    return this.cache?.ready.ready === true;
  }

  webhooks(): IndexedWebhook[] {
    const cache = this.cache;
    if (!cache || cache.size === 0) return [];
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
