#!/usr/bin/env node
// The `certkit` command. Node 26 runs the TypeScript sources directly. The module compile cache keeps what
// Node made of each module (TypeScript stripped, V8 code) on disk, in $NODE_COMPILE_CACHE or else the OS temp
// directory; so every start after the first neither loads the TypeScript stripper nor compiles again: on an
// idle controller that is ~30 MB of RSS (which the stripper's WebAssembly memory never gives back) and most of
// its start-up time (bench:idle). Where the directory cannot be written, Node runs without the cache.
// main.ts writes the cache as soon as a command's modules are loaded (not only at exit, which SIGKILL skips).
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('../src/main.ts');
