/**
 * Checks that the repository paths the Markdown docs cite still exist (run by `npm run lint` as `lint:docs`).
 *
 * Code moves; docs that name the old place send a newcomer to a file that is gone. This reads every Markdown
 * file of the repository (not node_modules, not the generated bench/results/) and checks:
 *
 * - Links, `[text](target)`: the target, relative to the doc as a Markdown renderer resolves it, exists, and
 *   so does the heading its `#anchor` names (GitHub's anchors).
 * - Code spans: a span that is one path-like word is a path when it is rooted (`packages/…`, `docs/…`,
 *   `scripts/…`, …), ends in `/`, or ends in a file extension (`.ts`, `.md`, …). Rooted paths must exist from
 *   the repository root. A short path (`registry/generic/store.ts`, `readiness/`) is looked up against the
 *   doc's folder and its package (`packages/X/src/`), the packages and folders its section names, and the
 *   repository root; when none of those holds it, it passes only if some file (or folder) of the repository
 *   ends with it, because a short name can be ambiguous but can never name nothing.
 * - Commands, in code spans with spaces and fenced code blocks: rooted words (`npx node --test
 *   packages/…/x.e2e.test.ts`) must exist, so that a command a doc gives can be pasted.
 * - Module specifiers of the workspace (`@certkit/testenv/bind/bind`) name a module of that package's `src/`.
 * - Nothing cites a file outside the repository (`../shared/…`, `research/…`, `DESIGN.md`, `seeds/…`), which a
 *   clone does not have.
 *
 * Globs and placeholders (`*`, `<name>`, `{a,b}`) and generated output (`dist/`, `.certkit/`, `docs/api/`) are
 * not checked.
 *
 * Usage: `node scripts/check-doc-paths.ts` from the repository root; exits 1 with one `file:line: problem` per
 * problem. With `--strict` (for a review, not lint) it also lists the short paths that resolve only by their
 * ending, which is where a doc may name a file of the same name in another place.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, posix } from 'node:path';

/** Folders at the repository root that a rooted path starts with. */
const ROOTS = ['packages', 'docs', 'scripts', 'bench', 'deploy', 'examples', '.ci', '.github'];
const ROOTED = new RegExp(`^(\\./)?(${ROOTS.map((root) => root.replace('.', '\\.')).join('|')})/`);
const FILE_EXTENSION = /\.(ts|js|cjs|mjs|md|json|yaml|yml|sh)$/;
/**
 * Roots of upstream Go repositories (cert-manager's `pkg/controller/…`, `design/…`; Gateway API's `config/…`),
 * which docs cite for comparison: a short path under one of these that is not ours is taken as upstream's.
 */
const UPSTREAM = /^(pkg|design|config|cmd|staging|internal)\//;
/** Something a path-like word may contain; anything else (spaces, `+`, `=`, `:`) makes it not a path. */
const PATH_WORD = /^[\w.@/-]+$/;
/** Placeholders and globs, which name many paths or none. */
const PATTERN = /[*<>{}$]/;
/** Build output and local state, gitignored: present only after a build or a run. */
const GENERATED = /(^|\/)(dist|\.certkit|node_modules)(\/|$)|^bench\/results\/profiles\/|^docs\/api(\/|$)/;

/** Citations of files a clone does not have. */
const OUTSIDE_REPO: { pattern: RegExp; what: string }[] = [
  { pattern: /\.\.\/shared\b/, what: '../shared' },
  { pattern: /(^|[^\w.-])research\/[\w.-]/, what: 'research/' },
  { pattern: /\bDESIGN\.md\b/, what: 'DESIGN.md' },
  { pattern: /(^|[^\w-])seeds\/[\w.-]/, what: 'seeds/' },
];

const PACKAGE_NAMES = ['apimachinery', 'apiserver', 'runtime', 'certificates', 'cli', 'testenv'];

/** The files and folders of a tree, as repository-relative POSIX paths. */
export interface RepoTree {
  has(path: string): boolean;
  /** Whether some file or folder's path ends with `/suffix`. */
  hasSuffix(suffix: string): boolean;
}

export function treeFromPaths(files: Iterable<string>): RepoTree {
  const paths = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let end = 1; end <= parts.length; end++) paths.add(parts.slice(0, end).join('/'));
  }
  return {
    has: (path) => paths.has(path),
    hasSuffix: (suffix) => {
      for (const path of paths) if (path === suffix || path.endsWith(`/${suffix}`)) return true;
      return false;
    },
  };
}

/** The files git knows: tracked, and new ones not ignored (so a file added but not yet committed counts). */
export function filesOfRepository(root: string): string[] {
  const output = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  // A file deleted in the work tree but still in the index is gone for a reader.
  return output.split('\0').filter((file) => file !== '' && existsSync(join(root, file)));
}

/** The Markdown files to check: all but the generated benchmark reports. */
export function markdownFiles(files: string[]): string[] {
  return files.filter((file) => file.endsWith('.md') && !file.startsWith('bench/results/')).sort();
}

interface Context {
  doc: string;
  /** The package the doc belongs to, e.g. `packages/apiserver`. */
  docPackage: string | undefined;
  /** Folders the current section and the sections it is in named, most recent first. */
  sectionFolders: string[];
}

function clean(path: string): string {
  return path
    .replace(/#.*$/, '')
    .replace(/:[\w.()-]*$/, '') // `http/server.ts:handleResource`, `file.ts:12`
    .replace(/[.,;]+$/, '')
    .replace(/^\.\//, '');
}

function join2(base: string, path: string): string {
  return posix.normalize(posix.join(base, path)).replace(/\/$/, '');
}

/** Folders a short path may be relative to, nearest first. */
function bases(context: Context): string[] {
  const docDir = dirname(context.doc).split('\\').join('/');
  const result = [docDir];
  if (context.docPackage) result.push(`${context.docPackage}/src`, context.docPackage);
  result.push(...context.sectionFolders);
  for (let dir = posix.dirname(docDir); dir !== '.' && dir !== ''; dir = posix.dirname(dir)) result.push(dir);
  for (const name of PACKAGE_NAMES) result.push(`packages/${name}/src`);
  result.push('.');
  return [...new Set(result)];
}

/** Why a cited path does not resolve, or undefined when it does. */
export function pathProblem(
  raw: string,
  context: Context,
  tree: RepoTree,
  strict = false,
): string | undefined {
  const path = clean(raw);
  if (path === '' || PATTERN.test(path) || GENERATED.test(path)) return undefined;
  const bare = path.replace(/\/$/, '');
  if (ROOTED.test(path)) return tree.has(bare) ? undefined : `\`${raw}\` does not exist`;
  for (const base of bases(context)) if (tree.has(join2(base, bare))) return undefined;
  if (UPSTREAM.test(path)) return undefined;
  if (tree.hasSuffix(bare)) {
    return strict
      ? `\`${raw}\` is found only by its ending, not beside the doc or in its section`
      : undefined;
  }
  return `\`${raw}\` matches no file or folder of the repository`;
}

/** Whether a code span's single word reads as a repository path. */
function looksLikePath(word: string): boolean {
  if (!PATH_WORD.test(word) || word.startsWith('@') || word.startsWith('/') || word.startsWith('-'))
    return false;
  if (/^\.[\w.]+$/.test(word) && !word.includes('/')) return false; // an extension: `.ts`, `.d.ts`
  if (word.startsWith('../')) return false; // a module specifier, relative to some source file
  if (/^\d/.test(word)) return false; // a version or a figure
  if (ROOTED.test(word)) return true;
  const bare = word.replace(/[#:].*$/, '').replace(/[.,;]+$/, '');
  if (bare.endsWith('/')) return bare.length > 1 && !bare.includes('//');
  return FILE_EXTENSION.test(bare);
}

/**
 * The folders a line names in code spans (`registry/generic/`, `packages/apiserver`), and the folders of the
 * files it names (`controllers/certificates/index.ts`), resolved.
 */
function foldersNamed(line: string, context: Context, tree: RepoTree): string[] {
  const folders: string[] = [];
  for (const name of PACKAGE_NAMES) {
    if (new RegExp(`packages/${name}\\b|@certkit/${name}\\b`).test(line))
      folders.push(`packages/${name}/src`);
  }
  for (const match of line.matchAll(/`([^`\s]+)\/?`/g)) {
    const word = clean(match[1]).replace(/\/$/, '');
    if (!PATH_WORD.test(word) || PATTERN.test(word)) continue;
    for (const base of bases({ ...context, sectionFolders: [] })) {
      const candidate = join2(base, word);
      if (tree.has(candidate)) {
        folders.push(FILE_EXTENSION.test(candidate) ? posix.dirname(candidate) : candidate);
        break;
      }
    }
  }
  return folders;
}

/** The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces as `-`. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const heading = fence ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * The problems of one Markdown document, as `doc:line: problem`. `readDoc` gives another Markdown file's text
 * (repository-relative), for the anchors of links into it.
 */
export function checkMarkdown(
  doc: string,
  text: string,
  tree: RepoTree,
  strict = false,
  readDoc: (path: string) => string | undefined = () => undefined,
): string[] {
  const problems: string[] = [];
  const docPackage = /^(packages\/[^/]+)\//.exec(doc)?.[1];
  const context: Context = { doc, docPackage, sectionFolders: [] };
  let fence: string | undefined;
  /** The folders named under each open heading, by level (index 0: before the first heading). */
  const foldersByLevel: string[][] = [[]];
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    const at = `${doc}:${index + 1}`;
    for (const { pattern, what } of OUTSIDE_REPO) {
      if (pattern.test(line)) problems.push(`${at}: cites ${what}, which is outside the repository`);
    }
    const fenceMark = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fenceMark !== undefined && (fence === undefined || fence === fenceMark)) {
      fence = fence === undefined ? fenceMark : undefined;
      continue;
    }
    if (fence !== undefined) {
      problems.push(...commandProblems(line, at, tree));
      continue;
    }
    const heading = /^(#{1,6})\s/.exec(line)?.[1].length;
    if (heading !== undefined) {
      foldersByLevel.length = heading; // a heading closes its level's section and those below
      foldersByLevel[heading] = [];
    }
    const level = foldersByLevel.length - 1;
    foldersByLevel[level] = [...foldersNamed(line, context, tree), ...(foldersByLevel[level] ?? [])];
    context.sectionFolders = foldersByLevel.flatMap((folders) => folders ?? []).reverse();

    for (const match of line.matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = match[1];
      if (/^[a-z][\w+.-]*:/i.test(target)) continue;
      const anchor = /#(.+)$/.exec(target)?.[1];
      const path = target.replace(/#.*$/, '');
      if (path === '') {
        if (anchor !== undefined && !headingAnchors(text).has(anchor))
          problems.push(`${at}: link (${target}) names no heading of this file`);
        continue;
      }
      const resolved = normalize(join(dirname(doc), path))
        .split('\\')
        .join('/')
        .replace(/\/$/, '');
      if (resolved.startsWith('..')) problems.push(`${at}: link (${target}) leaves the repository`);
      else if (!GENERATED.test(resolved) && !tree.has(resolved))
        problems.push(`${at}: link (${target}) does not exist (resolved to ${resolved})`);
      else if (anchor !== undefined && resolved.endsWith('.md')) {
        const linked = readDoc(resolved);
        if (linked !== undefined && !headingAnchors(linked).has(anchor))
          problems.push(`${at}: link (${target}) names no heading of ${resolved}`);
      }
    }
    // Code spans, outside the links' targets (a span may be a link's text).
    for (const match of line.matchAll(/(`+)([^`]+?)\1/g)) {
      const span = match[2].trim();
      if (/\s/.test(span)) {
        problems.push(...commandProblems(span, at, tree));
      } else if (span.startsWith('@certkit/')) {
        const problem = moduleProblem(span, tree);
        if (problem !== undefined) problems.push(`${at}: ${problem}`);
      } else if (looksLikePath(span)) {
        const problem = pathProblem(span, context, tree, strict);
        if (problem !== undefined) problems.push(`${at}: ${problem}`);
      }
    }
  }
  return problems;
}

/**
 * Why a `@certkit/…` module specifier names no module. Every workspace package exports `./*` as `./src/*.ts`,
 * so `@certkit/testenv/bind/bind` is `packages/testenv/src/bind/bind.ts`.
 */
export function moduleProblem(specifier: string, tree: RepoTree): string | undefined {
  const match = /^@certkit\/([\w-]+)(?:\/([\w./-]+?))?(?:\.ts)?$/.exec(specifier.replace(/[.,;:]+$/, ''));
  if (match === null) return undefined; // a pattern or prose (`@certkit/*`)
  const [, name, sub] = match;
  if (!tree.has(`packages/${name}/package.json`)) return `\`${specifier}\`: no package packages/${name}`;
  if (sub === undefined || sub.endsWith('/')) return undefined;
  if (tree.has(`packages/${name}/src/${sub}.ts`)) return undefined;
  return `\`${specifier}\`: no module packages/${name}/src/${sub}.ts`;
}

/** Rooted paths among the words of a command. */
function commandProblems(command: string, at: string, tree: RepoTree): string[] {
  const problems: string[] = [];
  for (const word of command.split(/[\s"'=()]+/)) {
    const path = clean(word).replace(/\/$/, '');
    if (!ROOTED.test(word) || PATTERN.test(path) || GENERATED.test(path) || !PATH_WORD.test(path)) continue;
    // `docs/adr/1001` in a listing is a reference, not a path: only files and folders are checked.
    if (!FILE_EXTENSION.test(path) && !word.endsWith('/')) continue;
    if (!tree.has(path)) problems.push(`${at}: \`${word}\` (in a command) does not exist`);
  }
  return problems;
}

if (import.meta.main) {
  const root = process.cwd();
  if (!existsSync(join(root, 'package.json')) || !statSync(join(root, 'packages')).isDirectory()) {
    throw new Error('check-doc-paths: run it from the repository root');
  }
  const files = filesOfRepository(root);
  const tree = treeFromPaths(files);
  const docs = markdownFiles(files);
  const strict = process.argv.includes('--strict');
  const problems = docs.flatMap((doc) =>
    checkMarkdown(doc, readFileSync(join(root, doc), 'utf8'), tree, strict, (path) =>
      existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : undefined,
    ),
  );
  if (problems.length > 0) {
    console.error(`check-doc-paths: ${problems.length} stale path(s)\n${problems.join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log(`check-doc-paths: every path cited in ${docs.length} Markdown files exists`);
  }
}
