/**
 * Real etcd processes for tests: one member (`startEtcd`) or a three-member cluster (`startEtcdCluster`) on
 * loopback, each on free ports with its own temporary data directory, with controls to stop (SIGTERM), kill
 * (SIGKILL) and restart a member on the same ports and data.
 *
 * Every process started here is killed, and every directory removed, when the test process exits, even if a test
 * forgot its cleanup(). Data directories go to /dev/shm when it exists (etcd fsyncs every write; on tmpfs that is
 * free), otherwise to the OS temporary directory.
 *
 * Besides the flags that place the member, the members get a short heartbeat (50 ms) and election timeout
 * (500 ms), so that a cluster elects a new leader quickly after a member is killed; both can be changed.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts } from '../net/free-ports.ts';
import { findExecutable, firstExecutable } from '../processes/executables.ts';

export interface EtcdProcess {
  /** The member name (--name). */
  readonly name: string;
  /** The client URL, e.g. http://127.0.0.1:40123. */
  readonly endpoint: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly dataDir: string;
  /** True while the process is alive. */
  readonly running: boolean;
  /** Stops the member with SIGTERM and waits for it to exit; the data directory stays. */
  stop(): Promise<void>;
  /** Kills the member with SIGKILL and waits for it to exit; the data directory stays. */
  kill(): Promise<void>;
  /** Starts the member again on the same ports and data (stopping it first if it runs) and waits until healthy. */
  restart(): Promise<void>;
  /** Kills the member and removes its data. */
  cleanup(): Promise<void>;
  /** The tail of the member's output, for diagnostics. */
  logs(): string;
}

export interface EtcdCluster {
  readonly members: EtcdProcess[];
  /** The client URLs of all members. */
  readonly endpoints: string[];
  /** Kills every member and removes their data. */
  cleanup(): Promise<void>;
}

export interface StartEtcdOptions {
  /** Member name (default "etcd"; "etcd-0".. for a cluster). */
  name?: string;
  /** --heartbeat-interval in ms (default 50). */
  heartbeatIntervalMs?: number;
  /** --election-timeout in ms (default 500). */
  electionTimeoutMs?: number;
  /** How long to wait for the member (or cluster) to report healthy, in ms (default 30000). */
  startTimeoutMs?: number;
  /** Parent of the temporary data directory (default /dev/shm when present, else the OS temp dir). */
  baseDir?: string;
}

const DEFAULT_BINARY = '/usr/bin/etcd';
const LOG_LIMIT = 64 * 1024;

/** The etcd binary to run: $ETCD_BINARY, /usr/bin/etcd, or `etcd` on PATH; undefined when there is none. */
export function etcdBinary(): string | undefined {
  const candidates = process.env.ETCD_BINARY ? [process.env.ETCD_BINARY, DEFAULT_BINARY] : [DEFAULT_BINARY];
  return firstExecutable(candidates) ?? findExecutable('etcd');
}

/** Whether an etcd binary is installed (see etcdBinary). */
export function etcdAvailable(): boolean {
  return etcdBinary() !== undefined;
}

// ---- process-exit safety net ----

const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHooksInstalled = false;

function killEverything(): void {
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  liveChildren.clear();
  for (const dir of liveDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort at exit
    }
  }
  liveDirs.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killEverything);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killEverything();
      // Without other listeners, re-raising the signal ends the process as it would have without ours.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** Keeps the event loop alive while waiting on an unref'd child process. */
async function keepingAlive<T>(promise: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1000);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}

// ---- helpers ----

function defaultBaseDir(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/** GET /health; true when the member reports {"health":"true"}. */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/health',
        agent: false,
        timeout: 1000,
        headers: { connection: 'close' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(res.statusCode === 200 && body.includes('"true"')));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

interface MemberConfig {
  binary: string;
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  initialCluster: string;
  clusterToken: string;
  heartbeatIntervalMs: number;
  electionTimeoutMs: number;
  startTimeoutMs: number;
}

class Member implements EtcdProcess {
  readonly name: string;
  readonly endpoint: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly dataDir: string;
  readonly #config: MemberConfig;
  /** The directory removed by cleanup() (the data directory's parent). */
  readonly #ownedDir: string | undefined;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #log = '';
  #cleanedUp = false;

  constructor(config: MemberConfig, ownedDir: string | undefined) {
    this.#config = config;
    this.#ownedDir = ownedDir;
    this.name = config.name;
    this.clientPort = config.clientPort;
    this.peerPort = config.peerPort;
    this.dataDir = config.dataDir;
    this.endpoint = `http://127.0.0.1:${config.clientPort}`;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  logs(): string {
    return this.#log;
  }

  /** Spawns the process without waiting for it to become healthy. */
  spawn(): void {
    if (this.#cleanedUp) throw new Error(`etcd ${this.name} was cleaned up`);
    if (this.#child) return;
    installExitHooks();
    const c = this.#config;
    const peerUrl = `http://127.0.0.1:${c.peerPort}`;
    const args = [
      '--name',
      c.name,
      '--data-dir',
      c.dataDir,
      '--listen-client-urls',
      this.endpoint,
      '--advertise-client-urls',
      this.endpoint,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      c.initialCluster,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      c.clusterToken,
      '--heartbeat-interval',
      String(c.heartbeatIntervalMs),
      '--election-timeout',
      String(c.electionTimeoutMs),
      '--logger',
      'zap',
      '--log-level',
      'warn',
    ];
    const child = spawn(c.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    liveChildren.add(child);
    const append = (chunk: Buffer): void => {
      this.#log += chunk.toString('utf8');
      if (this.#log.length > LOG_LIMIT) this.#log = this.#log.slice(-LOG_LIMIT);
    };
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    this.#exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        liveChildren.delete(child);
        if (this.#child === child) this.#child = undefined;
        append(Buffer.from(`\n[etcd ${this.name} exited: code ${code} signal ${signal}]\n`));
        resolve();
      });
      child.once('error', (err) => {
        liveChildren.delete(child);
        if (this.#child === child) this.#child = undefined;
        append(Buffer.from(`\n[etcd ${this.name} failed to start: ${err.message}]\n`));
        resolve();
      });
    });
    // A forgotten member must not keep the test process alive; the exit hook kills it.
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
  }

  /** Waits until /health reports true; fails early if the process exits. */
  async waitHealthy(timeoutMs = this.#config.startTimeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.#child) {
        throw new Error(`etcd ${this.name} exited during startup:\n${this.#log}`);
      }
      if (await healthy(this.clientPort)) return;
      if (Date.now() > deadline) {
        throw new Error(`etcd ${this.name} not healthy after ${timeoutMs} ms:\n${this.#log}`);
      }
      await sleep(25);
    }
  }

  async start(): Promise<void> {
    this.spawn();
    await this.waitHealthy();
  }

  async #signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill(signal);
    await keepingAlive(this.#exited);
  }

  stop(): Promise<void> {
    return this.#signal('SIGTERM');
  }

  kill(): Promise<void> {
    return this.#signal('SIGKILL');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async cleanup(): Promise<void> {
    if (this.#cleanedUp) return;
    await this.kill();
    this.#cleanedUp = true;
    if (this.#ownedDir !== undefined) {
      await rm(this.#ownedDir, { recursive: true, force: true });
      liveDirs.delete(this.#ownedDir);
    }
  }
}

function requireBinary(): string {
  const binary = etcdBinary();
  if (binary === undefined)
    throw new Error('etcd is not installed (looked for $ETCD_BINARY, /usr/bin/etcd, PATH)');
  return binary;
}

async function makeTempDir(base: string): Promise<string> {
  installExitHooks();
  const dir = await mkdtemp(join(base, 'certkit-etcd-'));
  liveDirs.add(dir);
  return dir;
}

/** Starts a single-member etcd on free loopback ports with a fresh data directory; resolves once it is healthy. */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdProcess> {
  const binary = requireBinary();
  const name = options.name ?? 'etcd';
  const [clientPort, peerPort] = await freePorts(2);
  const dir = await makeTempDir(options.baseDir ?? defaultBaseDir());
  const member = new Member(
    {
      binary,
      name,
      clientPort,
      peerPort,
      dataDir: join(dir, name),
      initialCluster: `${name}=http://127.0.0.1:${peerPort}`,
      clusterToken: `certkit-${process.pid}-${clientPort}`,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 50,
      electionTimeoutMs: options.electionTimeoutMs ?? 500,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
    },
    dir,
  );
  try {
    await member.start();
  } catch (err) {
    await member.cleanup();
    throw err;
  }
  return member;
}

/**
 * Starts a cluster of `size` members (default 3) on loopback, each with its own ports and data directory, all
 * bootstrapped together; resolves once every member is healthy.
 */
export async function startEtcdCluster(size = 3, options: StartEtcdOptions = {}): Promise<EtcdCluster> {
  const binary = requireBinary();
  const prefix = options.name ?? 'etcd';
  const ports = await freePorts(2 * size);
  const dir = await makeTempDir(options.baseDir ?? defaultBaseDir());
  const names = Array.from({ length: size }, (_, i) => `${prefix}-${i}`);
  const initialCluster = names.map((n, i) => `${n}=http://127.0.0.1:${ports[2 * i + 1]}`).join(',');
  const clusterToken = `certkit-${process.pid}-${ports[0]}`;
  const members = names.map(
    (name, i) =>
      new Member(
        {
          binary,
          name,
          clientPort: ports[2 * i],
          peerPort: ports[2 * i + 1],
          dataDir: join(dir, name),
          initialCluster,
          clusterToken,
          heartbeatIntervalMs: options.heartbeatIntervalMs ?? 50,
          electionTimeoutMs: options.electionTimeoutMs ?? 500,
          startTimeoutMs: options.startTimeoutMs ?? 30_000,
        },
        undefined,
      ),
  );
  const cleanup = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.cleanup()));
    await rm(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };
  try {
    for (const member of members) member.spawn();
    await Promise.all(members.map((m) => m.waitHealthy()));
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { members, endpoints: members.map((m) => m.endpoint), cleanup };
}
