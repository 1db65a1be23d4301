/**
 * Nameserver addresses as cert-manager reads them: the RFC2136 solver's `nameserver` (host or `[v6]`,
 * optional port, default 53: internal/apis/certmanager/validation/util/nameserver.go `ValidNameserver`), and the
 * check servers of `--dns01-recursive-nameservers` (`host:port` or an `https://` DoH URL: `ValidDNS01Nameserver`
 * there).
 */

import { getServers } from 'node:dns';
import { isIPv6 } from 'node:net';

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
  if (server.kind === 'https') return server.url;
  return `${isIPv6(server.host) ? `[${server.host}]` : server.host}:${server.port}`;
}

/**
 * Go's net.SplitHostPort, which cert-manager relies on: `[v6]:port`, `host:port`; a missing port is its own
 * error (callers that have a default port catch it).
 */
function splitHostPort(
  address: string,
): { host: string; port: string } | { error: string; missingPort?: true } {
  if (address.startsWith('[')) {
    const close = address.indexOf(']');
    if (close < 0) return { error: `address ${address}: missing ']' in address` };
    const host = address.slice(1, close);
    const rest = address.slice(close + 1);
    if (rest === '') return { error: `address ${address}: missing port in address`, missingPort: true };
    if (!rest.startsWith(':') || rest.includes(':', 1)) {
      return { error: `address ${address}: unexpected text after ']'` };
    }
    return { host, port: rest.slice(1) };
  }
  const colon = address.lastIndexOf(':');
  if (colon < 0) return { error: `address ${address}: missing port in address`, missingPort: true };
  const host = address.slice(0, colon);
  if (host.includes(':')) return { error: `address ${address}: too many colons in address` };
  return { host, port: address.slice(colon + 1) };
}

function parsePort(port: string, what: string): number {
  const n = /^[0-9]{1,5}$/.test(port) ? Number(port) : NaN;
  if (!(n >= 1 && n <= 65535)) throw new NameserverError(`${what}: invalid port ${JSON.stringify(port)}`);
  return n;
}

/** The RFC2136 `nameserver` field: `host`, `host:port`, `[v6]`, `[v6]:port`; the port defaults to 53. */
export function parseRFC2136Nameserver(value: string): Nameserver {
  const nameserver = value.trim();
  if (nameserver === '') throw new NameserverError('RFC2136 nameserver missing');
  let host: string;
  let port = '';
  const split = splitHostPort(nameserver);
  if ('error' in split) {
    if (!split.missingPort) throw new NameserverError(`RFC2136 nameserver is invalid: ${split.error}`);
    host = nameserver.replace(/^\[|\]$/g, '');
  } else {
    ({ host, port } = split);
  }
  if (host === '') throw new NameserverError(`RFC2136 nameserver has no host defined, ${nameserver}`);
  return {
    kind: 'dns',
    host,
    port: port === '' ? 53 : parsePort(port, `RFC2136 nameserver ${nameserver} is invalid`),
  };
}

/** One `--dns01-recursive-nameservers` entry (or a solver's `nameservers` entry): `host:port` or `https://…`. */
export function parseCheckNameserver(value: string): Nameserver {
  if (value.startsWith('https://')) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new NameserverError(`${value}: must be in the format https://<DoH RFC 8484 server address>`);
    }
    if (url.host === '') {
      throw new NameserverError(`${value}: must be in the format https://<DoH RFC 8484 server address>`);
    }
    return { kind: 'https', url: value };
  }
  const split = splitHostPort(value);
  if ('error' in split || split.host === '') {
    throw new NameserverError(`${value}: must be in the format <ip address>:<port>`);
  }
  return { kind: 'dns', host: split.host, port: parsePort(split.port, `nameserver ${value}`) };
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
