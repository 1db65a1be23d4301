/** The runtime's LruMap, where the controllers' caches have always imported it from. */
export { LruMap } from '@certkit/runtime/lru';
