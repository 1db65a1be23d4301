/**
 * The HTTP-01 flags' values as Go parses them: a listen address (`:80`, `127.0.0.1:8089`, `[::]:80`) and
 * the solver nameservers (`8.8.8.8:53`, `[2001:4860:4860::8888]:53`). Errors are one sentence, for the CLI.
 */

import { isIP } from 'node:net';
import { portNumber, splitHostPort } from '../../api/validation/nameserver.ts';

export interface ListenAddress {
  /** Empty: every interface. */
  host: string;
  port: number;
}

/** host:port, :port or [v6]:port; port 0 picks a free one (tests). */
export function parseListenAddress(value: string): ListenAddress {
  const split = splitHostPort(value);
  if ('error' in split)
    throw new Error(`${JSON.stringify(value)} is not host:port or :port (${split.error})`);
  const port = portNumber(split.port, 0);
  if (port === undefined) throw new Error(`${JSON.stringify(value)} has no port from 0 to 65535`);
  return { host: split.host, port };
}

/**
 * One nameserver for the self-check's lookups: an IP address and port, as node:dns's setServers takes it
 * (it cannot resolve a nameserver's own name, and neither could Go's resolver without recursion).
 */
export function parseNameserver(value: string): string {
  const split = splitHostPort(value.trim());
  const port = 'error' in split ? undefined : portNumber(split.port, 1);
  if ('error' in split || port === undefined || isIP(split.host) === 0) {
    throw new Error(`${JSON.stringify(value)} is not an IP address and port such as 8.8.8.8:53 or [::1]:53`);
  }
  return isIP(split.host) === 6 ? `[${split.host}]:${port}` : `${split.host}:${port}`;
}
