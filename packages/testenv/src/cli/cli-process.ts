import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { staleBuilds } from '../../../../scripts/build.ts';

/**
 * The `certkit` command in a process of its own, as a user runs it: `bin/certkit.js` over the compiled
 * JavaScript in dist/ (docs/adr/1103-compiled-javascript-in-production.md), not the TypeScript sources the
 * tests themselves run. Spawn it with `certkitEnv()`, which checks that the build is current.
 */

// Beside the package's main module, resolved through the package name, as Node resolves it, rather than a
// path into another package.
export const CERTKIT_BIN = fileURLToPath(
  new URL('../bin/certkit.js', import.meta.resolve('@certkit/cli/main')),
);
const execFileAsync = promisify(execFile);

/** `--conditions=source`, `--conditions source`, `-C source` in NODE_OPTIONS (the repository's .npmrc sets it). */
const SOURCE_CONDITION = /(^|\s)(--conditions[=\s]|-C\s?)source(?=\s|$)/g;

let buildChecked = false;

/**
 * The environment for a `certkit` process: this one's, without the `source` export condition, so that
 * bin/certkit.js resolves the workspace packages to their dist/ as an installed certkit does. Throws when a
 * package's dist/ is missing or was built from other sources than the ones checked out, which would make a
 * test pass or fail on old code.
 */
export function certkitEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (!buildChecked) {
    const stale = staleBuilds();
    if (stale.length > 0) {
      throw new Error(
        `the compiled certkit is stale or missing (${stale.map((p) => `packages/${p}/dist`).join(', ')}): ` +
          'run `npm run build` (`npm run test:e2e` does)',
      );
    }
    buildChecked = true;
  }
  const nodeOptions = (env.NODE_OPTIONS ?? '')
    .replace(SOURCE_CONDITION, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
  return { ...env, NODE_OPTIONS: nodeOptions };
}

export interface CliOptions {
  /** The umask to run with, e.g. '000' (the shell sets it before running node). */
  umask?: string;
  /** The open-file limit of the process (soft and hard), as `ulimit -n` sets it. */
  openFileLimit?: number;
  /** The working directory, where commands write files named relative to it (default: this process's). */
  cwd?: string;
  /**
   * What the process prints on stdout once it runs, its first group the server URL (default: `listening on
   * URL`, what up and apiserver print; `certkit cainjector` prints `... on URL`).
   */
  ready?: RegExp;
  /** Variables to set (or, undefined, to remove) in the process's environment, over this process's. */
  env?: NodeJS.ProcessEnv;
}

function command(args: string[], options: CliOptions): [string, string[]] {
  const setup = [
    ...(options.umask === undefined ? [] : [`umask ${options.umask}`]),
    ...(options.openFileLimit === undefined ? [] : [`ulimit -n ${options.openFileLimit}`]),
  ];
  if (setup.length === 0) return [process.execPath, [CERTKIT_BIN, ...args]];
  return [
    '/bin/sh',
    ['-c', `${setup.join(' && ')} && exec "$0" "$@"`, process.execPath, CERTKIT_BIN, ...args],
  ];
}

export interface RunningCli {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** All it printed, stdout and stderr. */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `certkit up|apiserver ...` (or another long-running command); resolves once it says it runs. */
export function startCli(args: string[], options: CliOptions = {}): Promise<RunningCli> {
  const [file, argv] = command(args, options);
  const child = spawn(file, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: certkitEnv({ ...process.env, ...options.env }),
    cwd: options.cwd,
  });
  let out = '';
  let err = '';
  let all = '';
  child.stdout!.on('data', (d) => ((out += d), (all += d)));
  child.stderr!.on('data', (d) => ((err += d), (all += d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 30 s: ${out}${err}`)), 30_000);
    child.stdout!.on('data', () => {
      const m = (options.ready ?? /listening on (https:\/\/\S+)/).exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        child,
        url: m[1],
        stderr: () => err,
        output: () => all,
        exited,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${out}${err}`));
    });
  });
}

/** Runs a command that is expected to end; resolves with its exit code and output, whatever the code. */
export async function runCli(
  args: string[],
  options: CliOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [file, argv] = command(args, options);
  try {
    const { stdout, stderr } = await execFileAsync(file, argv, {
      timeout: 30_000,
      env: certkitEnv({ ...process.env, ...options.env }),
      cwd: options.cwd,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** One request to the API server of the data dir, with its admin token and CA. */
export async function callApi(
  dataDir: string,
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const token = (await readFile(join(dataDir, 'token'), 'utf8')).trim();
  const ca = await readFile(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  const agent = new Agent({ ca });
  try {
    return await new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${url}${path}`,
        { method, agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  } finally {
    agent.destroy();
  }
}
