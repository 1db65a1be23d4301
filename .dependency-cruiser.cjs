// The import-boundary check (`npm run lint:imports`, part of `npm run lint` and so of `npm test`).
// The layering it enforces is docs/adr/0003-package-layering.md's; docs/adr/0121-lint.md says why this tool.
//
//   apimachinery  <-  apiserver
//   apimachinery  <-  runtime  <-  certificates  <-  cli      (cli also uses apiserver)
//   testenv: test support above them all, imported by tests only (as controller-runtime's envtest)
//
// Workspace packages are resolved through their node_modules link (preserveSymlinks), so that an import of
// `@certkit/runtime` is an npm dependency checked against the importer's package.json, and lands on
// node_modules/@certkit/runtime/...; a relative import into another package lands on packages/runtime/...
// and is refused on its own.

// Test files. All other test support lives in packages/testenv (TESTENV).
const TEST = '[.]test[.]ts$';
const TESTENV = '^packages/testenv/';
// A workspace package, however it was reached (its name, or a relative path).
const pkg = (names) => `^(packages|node_modules/@certkit)/(${names.join('|')})/`;

/** Forbids packages/FROM (product code only, or all of it, tests included) from importing `to`. */
function layer(from, to, { tests = true } = {}) {
  return {
    name: `${from}-not-above-${to.join('-')}`,
    comment:
      `${from} is below ${to.join(', ')} in the layering and may not import ${to.length > 1 ? 'them' : 'it'}` +
      (tests ? ', not even from a test (tests reach servers through @certkit/testenv)' : ''),
    severity: 'error',
    from: tests ? { path: `^packages/${from}/` } : { path: `^packages/${from}/`, pathNot: TEST },
    to: { path: pkg(to) },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-relative-import-across-packages',
      comment:
        'A package reaches another only through its name (@certkit/x), which its package.json declares: ' +
        'a relative path into another package hides the dependency from the manifest and from this check',
      severity: 'error',
      from: { path: '^packages/([^/]+)/' },
      to: { dependencyTypes: ['local'], path: '^packages/', pathNot: '^packages/$1/' },
    },
    layer('apimachinery', ['apiserver', 'runtime', 'certificates', 'cli']),
    layer('apiserver', ['runtime', 'certificates', 'cli']),
    layer('runtime', ['apiserver', 'certificates', 'cli']),
    // certificates' tests check its CRDs with the API server's own CRD validation; its product code may not.
    layer('certificates', ['apiserver'], { tests: false }),
    layer('certificates', ['cli']),
    // Inside the API server (docs/architecture.md, "The API server"): storage at the bottom, the patch formats
    // and the CRD schema code as leaves, the HTTP server and its verb handlers at the top.
    {
      name: 'apiserver-storage-is-the-bottom',
      comment: 'storage/ is what the registry is built on: it imports no other folder of the API server',
      severity: 'error',
      from: { path: '^packages/apiserver/src/storage/', pathNot: TEST },
      to: {
        path: '^packages/apiserver/src/',
        pathNot: '^packages/apiserver/src/storage/',
      },
    },
    {
      name: 'apiserver-patch-and-schema-are-leaves',
      comment:
        'patch/ (the patch formats) and schema/ (CRD structural schemas) work on plain JSON: they use no ' +
        'store, CRD, apply, cache, controller or HTTP code',
      severity: 'error',
      from: { path: '^packages/apiserver/src/(patch|schema)/', pathNot: TEST },
      to: {
        path: '^packages/apiserver/src/(http|registry/generic|registry/builtins|fieldmanager|crd|watchcache|controllers|storage)/',
      },
    },
    {
      name: 'apiserver-apply-and-decode-below-http',
      comment:
        'fieldmanager/ (server-side apply) and decode/ (reading request bodies) serve the HTTP side and use ' +
        'none of it, so that apply and body decoding can be used and tested without the HTTP layer',
      severity: 'error',
      from: { path: '^packages/apiserver/src/(fieldmanager|decode)/', pathNot: TEST },
      to: { path: '^packages/apiserver/src/http/' },
    },
    {
      name: 'apiserver-http-server-is-the-top',
      comment:
        'http/server.ts (the composition root) and http/handlers/ (the verbs) are reached from the HTTP ' +
        'side only: http/, the package entry and tests',
      severity: 'error',
      from: {
        path: '^packages/apiserver/src/',
        pathNot: `^packages/apiserver/src/(http/|index[.]ts$)|${TEST}`,
      },
      to: { path: '^packages/apiserver/src/http/(server[.]ts$|handlers/)' },
    },
    {
      name: 'product-code-not-on-testenv',
      comment:
        '@certkit/testenv (test servers, harnesses, fixtures) is for tests: the product does not run it, ' +
        'and packages declare it as a devDependency',
      severity: 'error',
      from: { path: '^packages/', pathNot: [TEST, TESTENV] },
      to: { path: pkg(['testenv']) },
    },
    {
      name: 'not-to-test-files',
      comment: 'A test file is run, not imported: shared test code goes in @certkit/testenv',
      severity: 'error',
      from: {},
      to: { path: TEST },
    },
    {
      name: 'no-non-package-json',
      comment: "Every import of a package is declared in the importing package's own package.json",
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-dev-dep',
      comment:
        'devDependencies are not installed with the package: only tests and testenv may use them ' +
        '(and type-only imports, which Node erases, such as kubernetes-types)',
      severity: 'error',
      from: { path: '^packages/', pathNot: [TEST, TESTENV] },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve would fail at run time',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The build's output (`npm run build`), generated from the sources checked here.
    exclude: { path: '^packages/[^/]+/dist/' },
    tsPreCompilationDeps: true,
    preserveSymlinks: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve workspace packages through their package.json `exports`, as Node does in development: the
    // `source` condition first, i.e. the TypeScript sources, not a build that may not exist (docs/adr/1103).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['source', 'import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
