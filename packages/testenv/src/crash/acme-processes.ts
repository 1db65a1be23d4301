/**
 * Processes for the ACME crash-safety test: a real BIND serving `acme.test` (every name under `h.acme.test`
 * resolves to 127.0.0.1 for HTTP-01; TXT records writable with TSIG for DNS-01), a real Pebble whose VA
 * resolves through that BIND and dials the controller's embedded HTTP-01 listener, and `certkit apiserver` as
 * a process. The controller itself is started (and SIGKILLed) by the test with `startControllerProcess` and
 * the flags given here, so that each restart listens on the same HTTP-01 port and asks the same DNS server.
 */

import { startBind, type BindServer } from '../bind/bind.ts';
import { startPebble, type Pebble } from '../pebble/pebble.ts';
import { type ApiServerProcess, startApiServerProcess } from './processes.ts';
import { freePort } from '../net/free-ports.ts';

export const CRASH_ACME_ZONE = 'acme.test';
/** HTTP-01 names are `<anything>.h.acme.test`: a wildcard A record answers them all. */
export const CRASH_HTTP01_DOMAIN = `h.${CRASH_ACME_ZONE}`;
/** DNS-01 names are `<anything>.d.acme.test`: no address needed, only the TXT record the solver writes. */
export const CRASH_DNS01_DOMAIN = `d.${CRASH_ACME_ZONE}`;

export interface AcmeCrashEnvironment {
  server: ApiServerProcess;
  bind: BindServer;
  pebble: Pebble;
  /** The TSIG key BIND accepts updates signed with, for the rfc2136 solver and its Secret. */
  tsig: { keyName: string; algorithm: string; secret: string };
  /** `certkit controller` flags wiring the embedded HTTP-01 listener and the DNS-01 checks to BIND. */
  controllerFlags: string[];
  /**
   * Every TXT record named `_acme-challenge.*` in the zone, read by a zone transfer from BIND (so that a record
   * of a name the test did not think of is seen too).
   */
  challengeRecords(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startAcmeCrashEnvironment(): Promise<AcmeCrashEnvironment> {
  const bind = await startBind({
    zones: [{ name: CRASH_ACME_ZONE, records: [`*.h IN A 127.0.0.1`] }],
  });
  const http01Port = await freePort();
  let pebble: Pebble | undefined;
  let server: ApiServerProcess;
  try {
    // Fresh authorizations for every Order (each issuance really solves its challenge); Pebble's default 5 %
    // badNonce rejections stay on, as in production-like runs.
    pebble = await startPebble({ dnsServer: bind.address, httpPort: http01Port, authzReusePercent: 0 });
    server = await startApiServerProcess();
  } catch (err) {
    // What did start must not outlive the failure (it would keep the test process alive).
    await pebble?.stop();
    await bind.stop();
    throw err;
  }
  const key = bind.keys.HMACSHA256;
  return {
    server,
    bind,
    pebble,
    tsig: { keyName: key.name, algorithm: key.algorithm, secret: key.secret },
    controllerFlags: [
      ...['--acme-http01-listen-address', `127.0.0.1:${http01Port}`],
      ...['--acme-http01-self-check-port', String(http01Port)],
      ...['--acme-http01-solver-nameservers', bind.address],
      ...['--dns01-recursive-nameservers', bind.address, '--dns01-recursive-nameservers-only', 'true'],
      ...['--dns01-check-retry-period', '1s', '--dns01-propagation-wait', '0s'],
    ],
    async challengeRecords() {
      const lines = await bind.dig(CRASH_ACME_ZONE, 'AXFR', ['+nocmd', '+nostats', '+nocomments']);
      if (!lines.some((l) => /\bSOA\b/.test(l)))
        throw new Error(`zone transfer refused: ${lines.join('\n')}`);
      return lines.filter((l) => /^_acme-challenge\./.test(l) && /\bTXT\b/.test(l));
    },
    async close() {
      await server.stop();
      await pebble.stop();
      await bind.stop();
    },
  };
}
