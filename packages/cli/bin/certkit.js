#!/usr/bin/env node
// The `certkit` command. It runs the compiled JavaScript in dist/ (`npm run build`); with the `source` export
// condition (`--conditions=source`, which the repository's npm scripts and npx set) the TypeScript sources.
// The module compile cache keeps what Node made of each module (V8 code, and the stripped TypeScript when
// running the sources) on disk, in $NODE_COMPILE_CACHE or else the OS temp directory, so every start after
// the first skips that work (bench:idle). Where the directory cannot be written, Node runs without it.
// main.ts writes the cache as soon as a command's modules are loaded (not only at exit, which SIGKILL skips).
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('@certkit/cli/main');
