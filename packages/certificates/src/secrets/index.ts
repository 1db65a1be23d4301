export * from './metadata-stub.ts';
export * from './selectors.ts';
export * from './split-cache.ts';
