#!/usr/bin/env node
// The `certkit` command. It runs the compiled JavaScript in dist/ (`npm run build`); with the `source` export
// condition (`--conditions=source`, which the repository's npm scripts and npx set) the TypeScript sources.
import '@certkit/cli/main';
