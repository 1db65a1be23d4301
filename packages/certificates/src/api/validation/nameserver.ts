/**
 * Addresses as cert-manager reads them, in one place for admission and for the code that dials them (as
 * upstream's internal/apis/certmanager/validation/util/nameserver.go serves both its webhook and its RFC2136
 * provider): Go's net.SplitHostPort and net.JoinHostPort, the RFC2136 solver's `nameserver`
 * (`ValidNameserver`) and a DNS-01 check server (`ValidDNS01Nameserver`). Only what upstream checks is checked
 * here; callers that dial add their own checks (a numeric port, say).
 */

/**
 * Go's net.SplitHostPort: host and port, or the error text it returns. Brackets are required around
 * IPv6 hosts, and the port may be empty (`host:`).
 */
export function splitHostPort(hostport: string): { host: string; port: string } | { error: string } {
  const fail = (reason: string) => ({ error: `address ${hostport}: ${reason}` });
  const colon = hostport.lastIndexOf(':');
  if (colon < 0) return fail('missing port in address');
  let host: string;
  let from = 0;
  let after = 0;
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']');
    if (end < 0) return fail("missing ']' in address");
    if (end + 1 === hostport.length) return fail('missing port in address');
    if (end + 1 !== colon) {
      return fail(hostport[end + 1] === ':' ? 'too many colons in address' : 'missing port in address');
    }
    host = hostport.slice(1, end);
    from = 1;
    after = end + 1;
  } else {
    host = hostport.slice(0, colon);
    if (host.includes(':')) return fail('too many colons in address');
  }
  if (hostport.slice(from).includes('[')) return fail("unexpected '[' in address");
  if (hostport.slice(after).includes(']')) return fail("unexpected ']' in address");
  return { host, port: hostport.slice(colon + 1) };
}

/** A port written in decimal digits from `min` (1 unless a caller allows 0, "any free port") to 65535. */
export function portNumber(text: string, min = 1): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= min && port <= 65535 ? port : undefined;
}

/** A port to dial, from 1 to 65535, or an error saying that `text` is not one. */
export function parsePort(text: string): number {
  const port = portNumber(text, 1);
  if (port === undefined) throw new Error(`${JSON.stringify(text)} is not a port from 1 to 65535`);
  return port;
}

/** Go's net.JoinHostPort: `host:port`, with an IPv6 host (any host with a colon) in brackets. */
export function joinHostPort(host: string, port: string | number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * util.ValidNameserver, the RFC2136 `nameserver`: host, host:port, [v6] or [v6]:port; the host and the port
 * (53 when none is given), or why it is invalid. The port is not checked to be a number, as upstream.
 */
export function rfc2136Nameserver(value: string): { host: string; port: string } | { error: string } {
  const nameserver = value.trim();
  if (nameserver === '') return { error: 'RFC2136 nameserver missing' };
  const split = splitHostPort(nameserver);
  let host: string;
  let port = '';
  if ('error' in split) {
    if (!split.error.includes('missing port'))
      return { error: `RFC2136 nameserver is invalid: ${split.error}` };
    // As upstream's strings.TrimPrefix / TrimSuffix: one bracket each side.
    host = nameserver.replace(/^\[/, '').replace(/\]$/, '');
  } else {
    ({ host, port } = split);
  }
  if (host === '') return { error: `RFC2136 nameserver has no host defined, ${nameserver}` };
  return { host, port: port || '53' };
}

/** util.ValidDNS01Nameserver: `host:port` for plain DNS or an `https://` DoH URL; the problem, or undefined. */
export function dns01NameserverError(value: string): string | undefined {
  if (value.startsWith('https://')) {
    return URL.canParse(value) && new URL(value).host !== ''
      ? undefined
      : 'must be in the format https://<DoH RFC 8484 server address>';
  }
  return 'error' in splitHostPort(value) ? 'must be in the format <ip address>:<port>' : undefined;
}
