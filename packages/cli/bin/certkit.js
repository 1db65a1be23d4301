#!/usr/bin/env node
// The `certkit` command. Node 26 runs the TypeScript sources directly.
import '../src/main.ts';
