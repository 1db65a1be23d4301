/**
 * A real BIND 9 (`named`, Debian `bind9`) for DNS-01 tests: authoritative for a few zones on a free loopback
 * port, accepting RFC 2136 updates of TXT records signed with TSIG keys of every HMAC algorithm, started with a
 * generated config in a temporary directory and stopped (SIGTERM, directory removed) by `stop()`, or when the
 * test process exits.
 *
 * Zones: `example.test` and `delegated.test`, each with `localhost.` as its only NS (so the authoritative check
 * reaches this server on 127.0.0.1), plus the records a test asks for, e.g. the CNAME case
 * `_acme-challenge.cname.example.test. CNAME _acme-challenge.cname.delegated.test.`.
 *
 * Run as root, named drops to the `bind` user (`-u bind`, the directory chowned to it); otherwise it runs as
 * the current user. Recursion is off: the server answers only for its zones, as an authoritative server does.
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { chownSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from '../net/free-ports.ts';
import { findExecutable } from '../processes/executables.ts';

const execFileAsync = promisify(execFile);

/** A TSIG key BIND knows, in the shapes cert-manager's `rfc2136` solver and BIND's tools take. */
export interface BindTsigKey {
  /** The key's name (`tsigKeyName`). */
  name: string;
  /** cert-manager's spelling (`tsigAlgorithm`), e.g. `HMACSHA256`. */
  algorithm: string;
  /** BIND's spelling, e.g. `hmac-sha256`. */
  bindAlgorithm: string;
  /** The secret as base64 text, as `tsig-keygen` prints it and the Secret holds it. */
  secret: string;
}

export interface BindZoneOptions {
  /** The zone's name, without the trailing dot. */
  name: string;
  /** Zone-file lines added after the SOA and NS records, relative to the zone (`www IN A 127.0.0.1`). */
  records?: string[];
}

export interface StartBindOptions {
  /** Zones to serve (default: `example.test` with the CNAME case, and `delegated.test`). */
  zones?: BindZoneOptions[];
  /** How long to wait for named to answer, in ms (default 15000). */
  startTimeoutMs?: number;
}

export interface BindServer {
  readonly host: string;
  readonly port: number;
  /** `127.0.0.1:<port>`, as the `nameserver` of an `rfc2136` solver and `--dns01-recursive-nameservers`. */
  readonly address: string;
  /** One key per HMAC algorithm, keyed by cert-manager's spelling (`HMACMD5` … `HMACSHA512`). */
  readonly keys: Readonly<Record<string, BindTsigKey>>;
  readonly zones: readonly string[];
  /** named's process id. */
  readonly pid: number;
  /** The temporary directory with named.conf, the zone files and their journals (removed by stop()). */
  readonly dir: string;
  /** The TXT strings at `name` as this server answers them (node:dns; empty when there is none). */
  txt(name: string): Promise<string[]>;
  /** `dig +norec <options> @<server> <name> <type>`'s output lines; the options default to `+short`. */
  dig(name: string, type: string, options?: string[]): Promise<string[]>;
  /** named's output so far, for diagnostics. */
  logs(): string;
  /** Stops named (SIGTERM, then SIGKILL after 5 s) and removes its directory. */
  stop(): Promise<void>;
}

/** BIND's names of the HMAC algorithms, by cert-manager's spelling. */
const ALGORITHMS: Record<string, string> = {
  HMACMD5: 'hmac-md5',
  HMACSHA1: 'hmac-sha1',
  HMACSHA224: 'hmac-sha224',
  HMACSHA256: 'hmac-sha256',
  HMACSHA384: 'hmac-sha384',
  HMACSHA512: 'hmac-sha512',
};

export const DEFAULT_BIND_ZONES: BindZoneOptions[] = [
  {
    name: 'example.test',
    records: [
      'www IN A 127.0.0.1',
      // cnameStrategy: Follow writes the TXT record in the zone this CNAME points to.
      '_acme-challenge.cname IN CNAME _acme-challenge.cname.delegated.test.',
      // A CNAME loop, which the check must report rather than follow forever.
      '_acme-challenge.loop IN CNAME _acme-challenge.loop2.example.test.',
      '_acme-challenge.loop2 IN CNAME _acme-challenge.loop.example.test.',
    ],
  },
  { name: 'delegated.test' },
];

const LOG_LIMIT = 64 * 1024;

/** Whether `named` (bind9) and `dig` (bind9-dnsutils) are installed. */
export function bindAvailable(): boolean {
  return (
    findExecutable('named', ['/usr/sbin']) !== undefined && findExecutable('dig', ['/usr/bin']) !== undefined
  );
}

const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  });
}

/** The `bind` user's uid and gid when we are root (named refuses nothing as root, but should not run as it). */
function bindUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const fields = line.split(':');
    if (fields[0] === 'bind') return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  return undefined;
}

function hasIPv6Loopback(): boolean {
  return Object.values(networkInterfaces()).some((addresses) =>
    (addresses ?? []).some((a) => a.family === 'IPv6' && a.address === '::1'),
  );
}

function zoneFile(zone: BindZoneOptions): string {
  return [
    '$TTL 60',
    `@ IN SOA localhost. hostmaster.${zone.name}. ( 1 60 60 3600 60 )`,
    '@ IN NS localhost.',
    ...(zone.records ?? []),
    '',
  ].join('\n');
}

export async function startBind(options: StartBindOptions = {}): Promise<BindServer> {
  const named = findExecutable('named', ['/usr/sbin']);
  if (!named) throw new Error('named is not installed (Debian package bind9)');
  installExitHook();
  const zones = options.zones ?? DEFAULT_BIND_ZONES;
  const dir = await mkdtemp(join(tmpdir(), 'certkit-bind-'));
  liveDirs.add(dir);
  const port = await freePort();
  const keys: Record<string, BindTsigKey> = {};
  for (const [algorithm, bindAlgorithm] of Object.entries(ALGORITHMS)) {
    keys[algorithm] = {
      name: `certkit-${bindAlgorithm}`,
      algorithm,
      bindAlgorithm,
      secret: randomBytes(32).toString('base64'),
    };
  }
  const keyBlocks = Object.values(keys).map(
    (key) => `key "${key.name}" { algorithm ${key.bindAlgorithm}; secret "${key.secret}"; };`,
  );
  const grants = Object.values(keys)
    .map((key) => `grant ${key.name} zonesub TXT;`)
    .join(' ');
  const zoneBlocks = zones.map(
    (zone) =>
      `zone "${zone.name}" { type primary; file "${join(dir, `${zone.name}.zone`)}"; update-policy { ${grants} }; };`,
  );
  const listenV6 = hasIPv6Loopback() ? `listen-on-v6 port ${port} { ::1; };` : 'listen-on-v6 { none; };';
  const config = [
    ...keyBlocks,
    'options {',
    `  directory "${dir}";`,
    `  pid-file "${join(dir, 'named.pid')}";`,
    `  session-keyfile "${join(dir, 'session.key')}";`,
    `  listen-on port ${port} { 127.0.0.1; };`,
    `  ${listenV6}`,
    '  recursion no;',
    '  dnssec-validation no;',
    '  notify no;',
    '};',
    // No rndc channel: the test stops named with a signal.
    'controls { };',
    ...zoneBlocks,
    '',
  ].join('\n');
  const configPath = join(dir, 'named.conf');
  await writeFile(configPath, config);
  for (const zone of zones) await writeFile(join(dir, `${zone.name}.zone`), zoneFile(zone));

  const user = bindUser();
  const args = ['-g', '-n', '1', '-c', configPath];
  if (user) {
    // named writes its journal files (<zone>.jnl) next to the zone files, as the user it drops to.
    chownSync(dir, user.uid, user.gid);
    for (const entry of readdirSync(dir)) chownSync(join(dir, entry), user.uid, user.gid);
    args.push('-u', 'bind');
  }
  const child = spawn(named, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let log = '';
  const append = (chunk: Buffer): void => {
    log += chunk.toString('utf8');
    if (log.length > LOG_LIMIT) log = log.slice(-LOG_LIMIT);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  // A server a test forgot to stop must not keep the test process alive; the exit hook kills it.
  child.unref();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      live.delete(child);
      resolve();
    });
    child.once('error', (err) => {
      exited = true;
      live.delete(child);
      append(Buffer.from(`\n[named failed to start: ${err.message}]\n`));
      resolve();
    });
  });

  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  const stop = async (): Promise<void> => {
    if (!exited) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };

  // Ready when it answers for its first zone.
  const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`named exited during startup:\n${log}`);
    }
    try {
      await resolver.resolveSoa(zones[0].name);
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`named did not answer within ${options.startTimeoutMs ?? 15_000} ms:\n${log}`);
      }
      await sleep(50);
    }
  }

  return {
    host: '127.0.0.1',
    port,
    address: `127.0.0.1:${port}`,
    keys,
    zones: zones.map((zone) => zone.name),
    pid: child.pid!,
    dir,
    async txt(name: string): Promise<string[]> {
      try {
        return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
        throw err;
      }
    },
    async dig(name: string, type: string, options = ['+short']): Promise<string[]> {
      const args = ['+norec', ...options, '-p', String(port), '@127.0.0.1', name, type];
      const { stdout } = await execFileAsync('dig', args);
      return stdout.split('\n').filter((line) => line !== '');
    },
    logs: () => log,
    stop,
  };
}
