/**
 * Test support: Pebble's challenge test server (`pebble-challtestsrv`, Debian package pebble) as a real DNS
 * server on a loopback port, answering only the A/AAAA records a test adds through its management API.
 * Skips (with the reason) where the binary is missing.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export const CHALLTESTSRV = 'pebble-challtestsrv';

/** Why the DNS tests cannot run here, or false when they can. */
export function challTestSrvMissing(): string | false {
  const probe = spawnSync(CHALLTESTSRV, ['-h'], { stdio: 'ignore' });
  return probe.error ? `${CHALLTESTSRV} is not installed (Debian package pebble)` : false;
}

/** A TCP port free right now on 127.0.0.1 (the OS picks it; a race with other processes is unlikely). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ChallTestSrv {
  /** `127.0.0.1:port` of its DNS server (UDP and TCP). */
  dnsAddress: string;
  addA(host: string, addresses: string[]): Promise<void>;
  close(): Promise<void>;
}

export async function startChallTestSrv(): Promise<ChallTestSrv> {
  const dnsPort = await freePort();
  const managementPort = await freePort();
  const child: ChildProcess = spawn(
    CHALLTESTSRV,
    [
      ...['-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${managementPort}`],
      // Only the DNS server, and no answers for names a test did not add.
      ...['-http01', '', '-https01', '', '-tlsalpn01', '', '-defaultIPv4', '', '-defaultIPv6', ''],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const management = `http://127.0.0.1:${managementPort}`;
  const post = (path: string, body: unknown) =>
    fetch(`${management}${path}`, { method: 'POST', body: JSON.stringify(body) }).then(async (res) => {
      if (!res.ok) throw new Error(`${CHALLTESTSRV} ${path}: ${res.status} ${await res.text()}`);
    });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${CHALLTESTSRV} exited: ${stderr}`);
    try {
      await post('/clear-txt', { host: 'ready.invalid.' });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${CHALLTESTSRV} did not start: ${stderr}`);
      await sleep(50);
    }
  }
  return {
    dnsAddress: `127.0.0.1:${dnsPort}`,
    addA: (host, addresses) => post('/add-a', { host, addresses }),
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
