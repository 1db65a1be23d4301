/**
 * Nameserver addresses the DNS-01 solver dials: the RFC2136 solver's `nameserver` (host or `[v6]`, optional
 * port, default 53) and the check servers of `--dns01-recursive-nameservers` (`host:port` or an `https://` DoH
 * URL). The rules are admission's (api/validation/nameserver.ts, as upstream's util/nameserver.go serves both
 * its webhook and its provider); this adds what dialling needs: a numeric port and a host.
 */

import { getServers } from 'node:dns';
import {
  dns01NameserverError,
  joinHostPort,
  parsePort,
  rfc2136Nameserver,
  splitHostPort,
} from '../../api/validation/nameserver.ts';

export type Nameserver =
  | { readonly kind: 'dns'; readonly host: string; readonly port: number }
  | { readonly kind: 'https'; readonly url: string };

export class NameserverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NameserverError';
  }
}

/** `host:port`, with IPv6 hosts in brackets (Go's net.JoinHostPort); a DoH server's URL. */
export function formatNameserver(server: Nameserver): string {
  return server.kind === 'https' ? server.url : joinHostPort(server.host, server.port);
}

/** The port to dial; `what` says which nameserver a bad one came from. */
function dialPort(port: string, what: string): number {
  try {
    return parsePort(port);
  } catch (err) {
    throw new NameserverError(`${what}: ${(err as Error).message}`);
  }
}

/**
 * The RFC2136 `nameserver` field, read by the rule admission checks it with (`rfc2136Nameserver`): `host`,
 * `host:port`, `[v6]`, `[v6]:port`, the port 53 by default; and, since it is dialled, a port from 1 to 65535.
 */
export function parseRFC2136Nameserver(value: string): Nameserver {
  const valid = rfc2136Nameserver(value);
  if ('error' in valid) throw new NameserverError(valid.error);
  return {
    kind: 'dns',
    host: valid.host,
    port: dialPort(valid.port, `RFC2136 nameserver ${value.trim()} is invalid`),
  };
}

/** One `--dns01-recursive-nameservers` entry (or a solver's `nameservers` entry): `host:port` or `https://…`. */
export function parseCheckNameserver(value: string): Nameserver {
  const problem = dns01NameserverError(value);
  if (problem) throw new NameserverError(`${value}: ${problem}`);
  if (value.startsWith('https://')) return { kind: 'https', url: value };
  const split = splitHostPort(value);
  // Upstream lets an empty host through (`:53`); a server to ask needs one.
  if ('error' in split || split.host === '') {
    throw new NameserverError(`${value}: must be in the format <ip address>:<port>`);
  }
  return { kind: 'dns', host: split.host, port: dialPort(split.port, `nameserver ${value}`) };
}

/** Google's public resolvers: cert-manager's last resort when the system lists none. */
const FALLBACK_NAMESERVERS = ['8.8.8.8:53', '8.8.4.4:53'];

/**
 * The check servers when no `--dns01-recursive-nameservers` are given: the system's resolvers (those of
 * /etc/resolv.conf, as node:dns read them at start), with port 53 where none is given; else Google's.
 */
export function systemNameservers(): Nameserver[] {
  const servers: Nameserver[] = [];
  for (const server of getServers()) {
    const split = splitHostPort(server);
    if ('error' in split) {
      servers.push({ kind: 'dns', host: server.replace(/^\[|\]$/g, ''), port: 53 });
    } else {
      servers.push({ kind: 'dns', host: split.host, port: split.port === '' ? 53 : Number(split.port) });
    }
  }
  return servers.length > 0 ? servers : FALLBACK_NAMESERVERS.map(parseCheckNameserver);
}
