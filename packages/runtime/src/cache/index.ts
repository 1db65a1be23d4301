export * from './cache.ts';
export * from './errors.ts';
export * from './informer.ts';
export type { FieldExtractor, KindTarget } from './informer-cache.ts';
export * from './options.ts';
export {
  ALL_NAMESPACES_INDEX_PREFIX,
  CONTINUE_NOT_SUPPORTED,
  fieldIndexName,
  namespacedIndexValue,
} from './reader.ts';
export * from './selectors.ts';
export { stripManagedFields } from '../informers/objects.ts';
