/**
 * Processes for the crash-safety test: `certkit apiserver` and `certkit controller`, each in a child process of
 * its own started through the CLI, exactly as a user would run them, so that a SIGKILL takes the controller
 * down mid-write with nothing flushed.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CERTKIT_BIN as CLI, certkitEnv } from '../cli/cli-process.ts';

export interface ApiServerProcess {
  url: string;
  dataDir: string;
  kubeconfigPath: string;
  pid: number;
  /** Resolves when the process has exited (killed or not). */
  exited: Promise<void>;
  /** True while the process runs. */
  alive(): boolean;
  /** SIGTERM, wait for the exit, then remove the data dir. */
  stop(): Promise<void>;
  /** Sends `signal` (default SIGKILL) and waits for the exit; the data dir stays, for a restart on it. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface ApiServerProcessOptions {
  /** Serve this data dir (a restart on what a killed server left) instead of a fresh one. */
  dataDir?: string;
  /** Listen here instead of on a free port: a restart keeps the address its kubeconfig names. */
  port?: number;
  /** More `certkit apiserver` flags, e.g. `--storage etcd --etcd-endpoints …`. */
  args?: string[];
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** `certkit apiserver --data-dir <fresh dir> --port 0`, resolved once it prints its URL. */
export async function startApiServerProcess(
  options: ApiServerProcessOptions = {},
): Promise<ApiServerProcess> {
  // First, so that a stale build is refused before a data dir is made that nothing would remove.
  const env = certkitEnv();
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'certkit-crash-')));
  const port = String(options.port ?? 0);
  const args = [CLI, 'apiserver', '--data-dir', dataDir, '--port', port, ...(options.args ?? [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      output += d;
      const m = /listening on (https:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`apiserver exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return {
    url,
    dataDir,
    kubeconfigPath: join(dataDir, 'kubeconfig'),
    pid: child.pid!,
    exited: exited(child),
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited(child);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ControllerProcess {
  child: ChildProcess;
  /** Resolves when the process has exited (killed or not). */
  exited: Promise<void>;
  /** Resolves when it says it is watching (flags parsed, kubeconfig read, controller started), or exits. */
  running: Promise<void>;
  /** What it wrote to stdout and stderr, for a failure message. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `certkit controller --kubeconfig … --leader-elect=false --metrics-bind-address=0 <flags>`. */
export function startControllerProcess(kubeconfigPath: string, flags: string[] = []): ControllerProcess {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'controller',
      '--kubeconfig',
      kubeconfigPath,
      '--leader-elect=false',
      '--metrics-bind-address=0',
      ...flags,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: certkitEnv() },
  );
  let output = '';
  const keep = (d: Buffer) => {
    output += d;
    // Keep the tail only: a long run of a chatty process must not grow without bound.
    if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const done = exited(child);
  const running = new Promise<void>((resolve) => {
    child.stdout!.on('data', () => {
      if (output.includes('certkit controller: watching')) resolve();
    });
    void done.then(resolve);
  });
  return {
    child,
    exited: done,
    running,
    output: () => output,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await done;
    },
  };
}
