// Run before `npm start` and `npm test` (prestart, pretest). Plain JavaScript, for whatever Node runs npm: the
// scripts run the Node.js 26 that `npm ci` installs (the `node` devDependency); without it they would meet the
// system's node, which fails on the first .ts file with a stack trace (ERR_UNKNOWN_FILE_EXTENSION), or find no
// tsc. Say what to do instead.
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../node_modules/node/package.json', import.meta.url))) {
  console.error('certkit: the dependencies are not installed: run `npm ci` first (npm ci && npm start)');
  process.exit(1);
}
