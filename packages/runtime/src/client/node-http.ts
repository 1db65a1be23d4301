import type * as NodeHttp from 'node:http';

/**
 * `node:http`, taken as the CommonJS module (process.getBuiltinModule) instead of through an ESM import. Node
 * builds the ESM namespace of a built-in module by reading every export, and node:http's include lazy getters
 * (the WebSocket classes from undici) that load undici and node:http2 with their native bindings: about 14 MB
 * of RSS in every process that imports it, which a Kubernetes client never uses (packages/runtime/src/client/module-footprint.e2e.test.ts).
 * Types still come from `import type` of node:http, which is erased.
 */
export const nodeHttp = process.getBuiltinModule('node:http') as typeof NodeHttp;
