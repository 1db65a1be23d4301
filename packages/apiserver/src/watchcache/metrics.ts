import type { MetricsRegistry } from '@certkit/apimachinery';
import type { WatchCaches } from './caches.ts';

/** Watch cache metrics, read at scrape time: state, initialisation time, watchers, events dispatched. */
export function registerCacheMetrics(metrics: MetricsRegistry, caches: WatchCaches): void {
  const each = <T>(f: (resource: string, cache: ReturnType<WatchCaches['entries']>[number]['cache']) => T) =>
    caches.entries().map(({ store, cache }) => {
      const resource = store.def.group ? `${store.def.resource}.${store.def.group}` : store.def.resource;
      return f(resource, cache);
    });
  metrics.gaugeFunc(
    'apiserver_watch_cache_ready',
    'Whether the watch cache of a resource is Ready (1) or not (0).',
    () => each((resource, cache) => [{ resource, state: cache.ready.state }, cache.ready.ready ? 1 : 0]),
  );
  metrics.gaugeFunc(
    'apiserver_watch_cache_initialization_duration_seconds',
    'How long the last (re)initialisation of the watch cache took.',
    () => each((resource, cache) => [{ resource }, cache.initDurationMs / 1000]),
  );
  metrics.gaugeFunc('apiserver_watch_cache_watchers', 'Current watchers of the watch cache.', () =>
    each((resource, cache) => [{ resource }, cache.listenerCount]),
  );
  metrics.gaugeFunc('apiserver_watch_cache_objects', 'Objects held by the watch cache.', () =>
    each((resource, cache) => [{ resource }, cache.size]),
  );
  metrics.counterFunc(
    'apiserver_watch_cache_events_dispatched_total',
    'Events delivered to watchers by the watch cache.',
    () => each((resource, cache) => [{ resource }, cache.eventsDispatched]),
  );
}
