/**
 * Pebble (Let's Encrypt's test ACME server, Debian package `pebble`) for tests: started on free loopback
 * ports with a generated config and a TLS certificate from a CA of its own, so a client trusts it through
 * `caBundle` alone, and stopped by pid. Pebble's random behaviour stays on unless an option turns it off:
 * notably its 5 % badNonce rejections (PEBBLE_WFE_NONCEREJECT), which a client must survive.
 *
 * Every Pebble started here is killed, and its directory removed, when the test process exits.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestCa } from '../pki/auth-certs.ts';
import { Agent, request } from 'undici';
import { freePorts } from '../net/free-ports.ts';
import { findExecutable } from '../processes/executables.ts';

export interface PebbleOptions {
  /** `externalAccountBindingRequired`: newAccount without EAB is refused. */
  eabRequired?: boolean;
  /** EAB key IDs → unpadded base64url MAC keys; one random key (`kid-1`) when not given. */
  eabKeys?: Record<string, string>;
  /** PEBBLE_VA_ALWAYS_VALID=1: every challenge passes without Pebble contacting anything. */
  alwaysValid?: boolean;
  /** PEBBLE_ALTERNATE_ROOTS: further roots cross-signing the intermediate (alternate chains). */
  alternateRoots?: number;
  /** PEBBLE_VA_NOSLEEP=1 (default true): no random 0–15 s pause before validating. */
  noSleep?: boolean;
  /** PEBBLE_WFE_NONCEREJECT in percent; left to Pebble's default (5) when not given. */
  nonceRejectPercent?: number;
  /** PEBBLE_AUTHZREUSE in percent; left to Pebble's default (50) when not given. */
  authzReusePercent?: number;
  /** `-dnsserver host:port` for the VA; the system resolver when not given. */
  dnsServer?: string;
  /** Ports the VA dials for http-01 / tls-alpn-01 (defaults: free ports nobody listens on). */
  httpPort?: number;
  tlsPort?: number;
  /** `certificateValidityPeriod` in seconds. */
  certificateValiditySeconds?: number;
}

export interface Pebble {
  /** The ACME directory URL, https://127.0.0.1:PORT/dir. */
  readonly directoryUrl: string;
  /** PEM of the CA that signed Pebble's TLS certificate: the Issuer's `caBundle`. */
  readonly caBundle: string;
  /** Pebble's management API (roots, intermediates), https with the same certificate. */
  readonly managementUrl: string;
  readonly eabKeys: Record<string, string>;
  /** The process id, e.g. to read Pebble's CPU time from /proc. */
  readonly pid: number;
  /** The issuing roots (PEM), the default one first and then each alternate root; new on every start. */
  roots(): Promise<string[]>;
  /** The tail of Pebble's output, for diagnostics. */
  logs(): string;
  /** SIGTERM, then SIGKILL if it lingers; removes the config directory. */
  stop(): Promise<void>;
}

const LOG_LIMIT = 64 * 1024;
const START_TIMEOUT_MS = 20_000;

/** The pebble binary on PATH, or undefined. */
export function pebbleBinary(): string | undefined {
  return findExecutable('pebble');
}

/** A test's `skip` value: the reason when pebble is not installed, else false. */
export function pebbleSkip(): string | false {
  return pebbleBinary() ? false : 'pebble is not installed (Debian package pebble)';
}

// ---- process-exit safety net, as the etcd harness has ----

const live = new Set<{ child: ChildProcess; dir: string }>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const { child, dir } of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

export async function startPebble(options: PebbleOptions = {}): Promise<Pebble> {
  const binary = pebbleBinary();
  if (!binary) throw new Error('pebble is not installed (apt-get install -y pebble)');
  hookExit();
  const dir = await mkdtemp(join(tmpdir(), 'certkit-pebble-'));
  const ca = await createTestCa('certkit test Pebble CA');
  const serving = await ca.issue({
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    usages: ['serverAuth'],
  });
  await writeFile(join(dir, 'cert.pem'), serving.certPem);
  await writeFile(join(dir, 'key.pem'), serving.keyPem);
  const eabKeys = options.eabKeys ?? { 'kid-1': randomMacKey() };
  const dispatcher = new Agent({ connect: { ca: ca.certPem } });

  // A free port can be taken between probing and Pebble binding it: start again on new ports then.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const [listen, management, http, tls] = await freePorts(4);
    const config = {
      pebble: {
        listenAddress: `127.0.0.1:${listen}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort: options.httpPort ?? http,
        tlsPort: options.tlsPort ?? tls,
        ocspResponderURL: '',
        externalAccountBindingRequired: options.eabRequired ?? false,
        externalAccountMACKeys: eabKeys,
        ...(options.certificateValiditySeconds
          ? { certificateValidityPeriod: options.certificateValiditySeconds }
          : {}),
      },
    };
    const configPath = join(dir, 'pebble.json');
    await writeFile(configPath, JSON.stringify(config));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith('PEBBLE_')) delete env[key];
    if (options.noSleep ?? true) env.PEBBLE_VA_NOSLEEP = '1';
    if (options.alwaysValid) env.PEBBLE_VA_ALWAYS_VALID = '1';
    if (options.alternateRoots !== undefined) env.PEBBLE_ALTERNATE_ROOTS = String(options.alternateRoots);
    if (options.nonceRejectPercent !== undefined)
      env.PEBBLE_WFE_NONCEREJECT = String(options.nonceRejectPercent);
    if (options.authzReusePercent !== undefined) env.PEBBLE_AUTHZREUSE = String(options.authzReusePercent);
    const args = ['-config', configPath, ...(options.dnsServer ? ['-dnsserver', options.dnsServer] : [])];

    const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const entry = { child, dir };
    live.add(entry);
    let output = '';
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-LOG_LIMIT);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let running = true;
    void exited.then(() => (running = false));

    const directoryUrl = `https://127.0.0.1:${listen}/dir`;
    const managementUrl = `https://127.0.0.1:${management}`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (running && Date.now() < deadline) {
      if (await answers(directoryUrl, dispatcher)) break;
      await sleep(50);
    }
    if (!running || !(await answers(directoryUrl, dispatcher))) {
      child.kill('SIGKILL');
      await exited;
      live.delete(entry);
      lastError = new Error(`pebble did not start: ${output}`);
      continue;
    }

    return {
      directoryUrl,
      caBundle: ca.certPem,
      managementUrl,
      eabKeys,
      pid: child.pid ?? 0,
      async roots() {
        const roots: string[] = [];
        for (let i = 0; i <= (options.alternateRoots ?? 0); i++) {
          const response = await request(`${managementUrl}/roots/${i}`, { dispatcher });
          const text = await response.body.text();
          if (response.statusCode !== 200)
            throw new Error(`pebble /roots/${i}: ${response.statusCode} ${text}`);
          roots.push(text);
        }
        return roots;
      },
      logs: () => output,
      async stop() {
        if (running) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(timer);
        }
        live.delete(entry);
        await dispatcher.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  await dispatcher.close();
  await rm(dir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error('pebble did not start');
}

async function answers(url: string, dispatcher: Agent): Promise<boolean> {
  try {
    const response = await request(url, { dispatcher, signal: AbortSignal.timeout(2000) });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

function randomMacKey(): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
}
