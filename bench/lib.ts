import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Shared pieces of the benchmarks: a server in its own process, an HTTPS client, timing and reporting. */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface ServerProcess {
  url: string;
  token: string;
  ca: string;
  pid: number;
  child: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
}

export interface ServerProcessOptions {
  /** Flags for node itself, e.g. `--cpu-prof --cpu-prof-dir=…` (the profile is written when stop() ends it). */
  nodeArgs?: string[];
  /** Another checkout to run the server from (its packages/cli), to compare two API servers under one bench. */
  root?: string;
  /** `up` runs the certificate controller in the process too (default `apiserver`). */
  command?: 'apiserver' | 'up';
  /**
   * What node runs, relative to the root: `packages/cli/src/main.ts` (default) or `packages/cli/bin/certkit.js`,
   * the installed command, which keeps Node's module compile cache.
   */
  entry?: string;
  /** More environment for the server, e.g. glibc's MALLOC_* tunables to compare. */
  env?: Record<string, string>;
}

/**
 * Starts `certkit apiserver` (or `up`) on a free port in a fresh data dir (or the given one), with extra flags. stop()
 * sends SIGTERM, on which the server shuts down and exits cleanly (so a --cpu-prof profile gets written).
 */
export async function startServerProcess(
  dataDir?: string,
  flags: string[] = [],
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'certkit-bench-')));
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      join(options.root ?? root, options.entry ?? 'packages/cli/src/main.ts'),
      options.command ?? 'apiserver',
      '--data-dir',
      dir,
      '--port',
      '0',
      ...flags,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: options.env ? { ...process.env, ...options.env } : process.env,
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
  const ca = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
  return {
    url,
    token,
    ca,
    pid: child.pid!,
    child,
    dataDir: dir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      if (!dataDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export class Client {
  readonly agent: Agent;
  readonly server: ServerProcess;
  constructor(server: ServerProcess, sockets = 16) {
    this.server = server;
    this.agent = new Agent({ ca: server.ca, keepAlive: true, maxSockets: sockets });
  }

  call(
    method: string,
    path: string,
    body?: unknown,
    accept = 'application/json',
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = {
        Authorization: `Bearer ${this.server.token}`,
        Accept: accept,
      };
      if (payload) headers['Content-Type'] = 'application/json';
      const req = request(`${this.server.url}${path}`, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `total` operations with `concurrency` workers; returns operations per second. */
export async function throughput(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
): Promise<{ opsPerSec: number; seconds: number }> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await op(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { opsPerSec: total / seconds, seconds };
}

/** The value of `--name=VALUE` on the command line (everything after the first '='), or undefined. */
export function flag(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

/** `--name=a,b`: a comma-separated list, as the node flags given to a child process (`--x-node-args=`). */
export function listFlag(name: string): string[] {
  return flag(name)?.split(',').filter(Boolean) ?? [];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Reads a process's resident memory from /proc, in MiB: current (VmRSS) or peak (VmHWM). */
export async function rssMiB(pid: number, which: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${which}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Polls /readyz until it answers 200; returns the milliseconds it took. */
export async function waitReadyz(client: Client, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  while ((await client.call('GET', '/readyz')).status !== 200) {
    if (performance.now() - started > timeoutMs) throw new Error('/readyz did not pass');
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

export async function writeResults(name: string, results: unknown, table: string): Promise<void> {
  const dir = join(root, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(dir, `${name}.md`), `${table}\n`);
  process.stdout.write(`${table}\n`);
}
