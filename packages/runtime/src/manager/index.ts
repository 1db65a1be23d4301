export * from './controller.ts';
export * from './leader-election.ts';

export * from './manager.ts';
export * from './metrics.ts';
export * from './probes.ts';
export * from './burst-end.ts';
export * from './release-memory.ts';
export * from './first-work.ts';
export * from './optimizing-compilers.ts';
