export * from './continue.ts';
export * from './fields.ts';
export * from './labels.ts';
export * from './listoptions.ts';
export * from './meta.ts';
export * from './query-bool.ts';
export * from './status.ts';
