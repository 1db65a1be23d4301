#!/usr/bin/env node
// The `certkit` command. It runs the compiled JavaScript in dist/ (`npm run build`); with the `source` export
// condition (`--conditions=source`, which the repository's npm scripts and npx set) the TypeScript sources.
// The module compile cache keeps what Node made of each module (V8 code, and the stripped TypeScript when
// running the sources) on disk, in $NODE_COMPILE_CACHE or else the OS temp directory, so every start after
// the first skips that work (bench:idle). Where the directory cannot be written, Node runs without it.
// main.ts writes the cache as soon as a command's modules are loaded (not only at exit, which SIGKILL skips).
// An installed certkit may meet an older Node than package.json's engines allow (npm only warns): say so in
// one line rather than fail on whichever newer API happens to load first. node:sqlite runs unflagged from 22.13.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  // In a checkout (the `node` devDependency beside it) the system's `node` is the usual cause: say what works.
  const { existsSync } = await import('node:fs');
  const checkout = existsSync(new URL('../../../node_modules/node/package.json', import.meta.url));
  console.error(
    `certkit: needs Node.js 22.13 or later; this is ${process.version}` +
      (checkout ? ' (in this checkout, run npx certkit: it uses the Node.js of the node devDependency)' : ''),
  );
  process.exit(1);
}
// Not `import module from 'node:module'`: an ES import of a built-in builds its namespace, reading every
// export, and node:module's include a lazy getter that loads Node's source map support (docs/adr/1131).
process.getBuiltinModule('node:module').enableCompileCache();
// `certkit controller`, the process that lives under a pod's memory limit, runs the same main module bundled
// into a few chunks (scripts/bundle-controller.ts): ~10 MB less idle RSS than loading ~250 files
// (docs/adr/1130-idle-controller-bundle.md); so does `certkit cainjector`, the other such process. Under the
// `source` condition both names are the sources.
const bundled = process.argv[2] === 'controller' || process.argv[2] === 'cainjector';
await import(bundled ? '@certkit/cli/controller-bundle' : '@certkit/cli/main');
