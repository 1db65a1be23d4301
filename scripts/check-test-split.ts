/**
 * Checks the split of the test files into `npm run test:fast` and `npm run test:e2e` (run by `npm run lint`).
 *
 * - Every `*.test.ts` under `packages/` is matched by exactly one of the two scripts' globs, read from
 *   package.json so that this check and the scripts cannot drift apart.
 * - End-to-end files are named `*.e2e.test.ts`; the older `*.apiserver.test.ts` and `*.integration.test.ts`
 *   are refused, so that the name alone says which set a file is in.
 * - Test support lives in packages/testenv: under a product package's src/, a file that is not a test but
 *   is named as test support (testing/, testdata/, fixtures/, testing.ts, *test-support.ts, *test-harness.ts,
 *   integration-support.ts) is refused.
 * - A fast file starts nothing: it imports no test server, etcd, kubectl, client or CLI harness, no
 *   process or network module, and calls no openssl. The check reads the file's text (imports and a few
 *   calls); it cannot see a server started through a product module, which review has to catch.
 *
 * Usage: `node scripts/check-test-split.ts` from the repository root; exits 1 with one line per problem.
 */
import { globSync, readFileSync } from 'node:fs';

const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** The quoted glob of an npm script that runs `node --test "GLOB"`. */
function testGlob(script: string): string {
  const command = scripts[script];
  const glob = command === undefined ? undefined : /node --test [^"]*"([^"]+)"/.exec(command)?.[1];
  if (glob === undefined) throw new Error(`package.json: script ${script} is not node --test "GLOB"`);
  return glob;
}

/**
 * What a fast file must not import: the harnesses of @certkit/testenv that start servers or processes
 * (its fakes, fixtures and parsers, e.g. fake/resource-client or cert-manager/examples, are fine).
 */
const FORBIDDEN_IMPORTS: { pattern: RegExp; why: string }[] = [
  { pattern: /^node:(child_process|cluster|http|https|http2|net|tls|dgram)$/, why: 'processes or sockets' },
  {
    pattern:
      /^@certkit\/testenv\/(apiserver\/(test-server|watch-client|cluster|fault-proxy)|etcd|kubectl|python|cli|crash|processes)\b/,
    why: 'a real API server, etcd, kubectl, client or a process',
  },
  {
    pattern: /^@certkit\/testenv\/(http\/local-server|apiserver\/cert-manager-server)\b/,
    why: 'a local HTTP server',
  },
  {
    pattern:
      /^@certkit\/testenv\/(controllers\/certificaterequests-harness|conformance\/(environment|runner))\b/,
    why: 'a real API server',
  },
  {
    pattern: /^@certkit\/testenv\/storage\/contract\b/,
    why: 'the storage contract suite (SQLite or etcd files)',
  },
];

/** Calls that start a process or a server, whatever module they come from. */
const FORBIDDEN_CALLS: { pattern: RegExp; why: string }[] = [
  { pattern: /\b(startTestServer|startEtcd|startControlPlane)\s*\(/, why: 'starts a server' },
  { pattern: /\bApiServer\.start\s*\(/, why: 'starts the API server' },
  { pattern: /\b(openssl|opensslVerify|opensslUnavailable)\s*\(/, why: 'runs openssl' },
  { pattern: /\.listen\s*\(/, why: 'listens on a socket' },
];

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

function fastFileProblems(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const problems: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2] ?? '';
    for (const { pattern, why } of FORBIDDEN_IMPORTS) {
      if (pattern.test(specifier)) problems.push(`${file}: imports ${specifier} (${why})`);
    }
  }
  for (const { pattern, why } of FORBIDDEN_CALLS) {
    const call = pattern.exec(text);
    if (call) problems.push(`${file}: calls ${call[0].trim()}…) (${why})`);
  }
  return problems.map((problem) => `${problem}: rename it *.e2e.test.ts, or take the server out`);
}

const fastGlob = testGlob('test:fast');
const e2eGlob = testGlob('test:e2e');
const fast = new Set(globSync(fastGlob));
const e2e = new Set(globSync(e2eGlob));
const all = globSync('packages/**/*.test.ts', { exclude: (path) => path.endsWith('node_modules') }).sort();

const problems: string[] = [];
for (const file of all) {
  const inFast = fast.has(file);
  const inE2e = e2e.has(file);
  if (!inFast && !inE2e)
    problems.push(`${file}: in neither test:fast (${fastGlob}) nor test:e2e (${e2eGlob})`);
  if (inFast && inE2e) problems.push(`${file}: in both test:fast and test:e2e`);
  if (/\.(apiserver|integration)\.test\.ts$/.test(file)) {
    problems.push(`${file}: end-to-end test files are named *.e2e.test.ts`);
  }
  if (inFast) problems.push(...fastFileProblems(file));
}

// Names that test support went by before it moved to packages/testenv (issue 15).
const TEST_SUPPORT_NAME =
  /\/(testing|testdata|fixtures)\/|\/(testing|integration-support|[\w-]*test-(support|harness|helpers))\.ts$/;
const productFiles = globSync('packages/*/src/**/*', {
  exclude: (path) => path.endsWith('node_modules') || path.startsWith('packages/testenv'),
});
for (const file of productFiles.sort()) {
  if (!file.endsWith('.test.ts') && TEST_SUPPORT_NAME.test(file)) {
    problems.push(
      `${file}: test support lives in packages/testenv (@certkit/testenv), not in a product package`,
    );
  }
}

if (problems.length > 0) {
  console.error(`check-test-split: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exitCode = 1;
} else {
  console.log(`check-test-split: ${fast.size} fast and ${e2e.size} end-to-end test files, each in one set`);
}
