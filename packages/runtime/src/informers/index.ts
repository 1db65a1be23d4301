export * from './backoff.ts';
export * from './factory.ts';
export * from './handlers.ts';

export { composeTransforms, deepCopy, deepFreeze, type TransformFunc } from './objects.ts';
export * from './reflector.ts';
export * from './shared-informer.ts';
export * from './store.ts';
