import type { Environment } from '@marcbachmann/cel-js';
import ipaddr from 'ipaddr.js';

/**
 * Kubernetes' URL, IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library/{urls,ip,cidr}.go): `url()`,
 * `ip()`, `cidr()` and their methods, with `isURL`, `isIP`, `isCIDR`. Addresses are parsed by ipaddr.js, held
 * to kube's stricter rules (no zones, no IPv4 with leading zeros, no IPv4-mapped IPv6 for ip()).
 */

class IpNamespace {}

export class KubeUrl {
  readonly url: URL;
  readonly text: string;
  constructor(url: URL, text: string) {
    this.url = url;
    this.text = text;
  }
}

export class KubeIp {
  readonly address: ipaddr.IPv4 | ipaddr.IPv6;
  constructor(address: ipaddr.IPv4 | ipaddr.IPv6) {
    this.address = address;
  }
}

export class KubeCidr {
  readonly address: ipaddr.IPv4 | ipaddr.IPv6;
  readonly prefix: number;
  constructor(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number) {
    this.address = address;
    this.prefix = prefix;
  }
}

/** kube's isURL and url(): Go's url.ParseRequestURI, an absolute URI or an absolute path. */
export function parseUrl(text: string): KubeUrl | undefined {
  if (/\s/.test(text) || text === '') return undefined;
  try {
    return new KubeUrl(new URL(text, text.startsWith('/') ? 'relative:/' : undefined), text);
  } catch {
    return undefined;
  }
}

const IPV4_STRICT = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** An IP as kube's ip() accepts it: dotted IPv4 without leading zeros, or IPv6 without a zone. */
export function parseIp(text: string): KubeIp | undefined {
  if (IPV4_STRICT.test(text)) return new KubeIp(ipaddr.IPv4.parse(text));
  if (!text.includes(':') || text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  const address = ipaddr.IPv6.parse(text);
  // kube refuses IPv4-mapped IPv6 addresses in ip().
  if (address.isIPv4MappedAddress()) return undefined;
  return new KubeIp(address);
}

export function parseCidr(text: string): KubeCidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0 || !/^(0|[1-9]\d{0,2})$/.test(text.slice(slash + 1))) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefix = Number(text.slice(slash + 1));
  if (ip === undefined || prefix > (ip.address.kind() === 'ipv4' ? 32 : 128)) return undefined;
  return new KubeCidr(ip.address, prefix);
}

function orThrow<T>(value: T | undefined, what: string, text: string): T {
  if (value === undefined) throw new Error(`${what} parse error during conversion from string: ${text}`);
  return value;
}

function format(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return address.kind() === 'ipv4' ? address.toString() : (address as ipaddr.IPv6).toRFC5952String();
}

function contains(cidr: KubeCidr, address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() !== cidr.address.kind()) return false;
  return address.match(cidr.address, cidr.prefix);
}

function masked(cidr: KubeCidr): KubeCidr {
  const bytes = cidr.address.toByteArray();
  for (let bit = cidr.prefix; bit < bytes.length * 8; bit++) bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return new KubeCidr(ipaddr.fromByteArray(bytes), cidr.prefix);
}

/** Go's netip classification, which kube's ip methods use. */
function ipRange(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return address.range();
}

export function registerNet(env: Environment): void {
  env.registerType('net.URL', KubeUrl);
  env.registerType('net.IP', KubeIp);
  env.registerType('net.CIDR', KubeCidr);
  env.registerFunction('url(string): net.URL', (text: string) => orThrow(parseUrl(text), 'URL', text));
  env.registerFunction('isURL(string): bool', (text: string) => parseUrl(text) !== undefined);
  env.registerFunction('ip(string): net.IP', (text: string) => orThrow(parseIp(text), 'IP Address', text));
  env.registerFunction('isIP(string): bool', (text: string) => parseIp(text) !== undefined);
  // `ip.isCanonical(x)` parses as a method of a variable named ip: the namespace is a constant of its own type.
  env.registerType('k8s.IpNamespace', IpNamespace);
  env.registerConstant('ip', 'k8s.IpNamespace', new IpNamespace());
  env.registerFunction({
    name: 'isCanonical',
    receiverType: 'k8s.IpNamespace',
    returnType: 'bool',
    params: [{ name: 'text', type: 'string' }],
    handler: ((_ns: IpNamespace, text: string) =>
      format(orThrow(parseIp(text), 'IP Address', text).address) === text) as (...args: unknown[]) => unknown,
  });
  env.registerFunction('cidr(string): net.CIDR', (text: string) =>
    orThrow(parseCidr(text), 'network address', text),
  );
  env.registerFunction('isCIDR(string): bool', (text: string) => parseCidr(text) !== undefined);
  env.registerFunction('string(net.IP): string', (ip: KubeIp) => format(ip.address));
  env.registerFunction('string(net.CIDR): string', (c: KubeCidr) => `${format(c.address)}/${c.prefix}`);
  env.registerOperator('net.IP == net.IP', (a: KubeIp, b: KubeIp) => format(a.address) === format(b.address));
  env.registerOperator(
    'net.CIDR == net.CIDR',
    (a: KubeCidr, b: KubeCidr) => a.prefix === b.prefix && format(a.address) === format(b.address),
  );
  const method = <T>(
    type: string,
    name: string,
    params: string[],
    returnType: string,
    handler: (self: T, ...args: never[]) => unknown,
  ) =>
    env.registerFunction({
      name,
      receiverType: type,
      returnType,
      params: params.map((t, i) => ({ name: `arg${i}`, type: t })),
      handler: handler as (...args: unknown[]) => unknown,
    });
  method<KubeUrl>('net.URL', 'getScheme', [], 'string', (u) =>
    u.text.startsWith('/') ? '' : u.url.protocol.slice(0, -1),
  );
  method<KubeUrl>('net.URL', 'getHost', [], 'string', (u) => (u.text.startsWith('/') ? '' : u.url.host));
  method<KubeUrl>('net.URL', 'getHostname', [], 'string', (u) =>
    u.text.startsWith('/') ? '' : u.url.hostname.replace(/^\[(.*)\]$/, '$1'),
  );
  method<KubeUrl>('net.URL', 'getPort', [], 'string', (u) => (u.text.startsWith('/') ? '' : u.url.port));
  method<KubeUrl>('net.URL', 'getEscapedPath', [], 'string', (u) => u.url.pathname);
  method<KubeUrl>('net.URL', 'getQuery', [], 'map<string, list<string>>', (u) => {
    const query: Record<string, string[]> = {};
    for (const [key, value] of u.url.searchParams) (query[key] ??= []).push(value);
    return query;
  });
  method<KubeIp>('net.IP', 'family', [], 'int', (ip) => (ip.address.kind() === 'ipv4' ? 4n : 6n));
  method<KubeIp>('net.IP', 'isUnspecified', [], 'bool', (ip) => ipRange(ip.address) === 'unspecified');
  method<KubeIp>('net.IP', 'isLoopback', [], 'bool', (ip) => ipRange(ip.address) === 'loopback');
  method<KubeIp>('net.IP', 'isLinkLocalMulticast', [], 'bool', (ip) =>
    ip.address.kind() === 'ipv4'
      ? ip.address.match(ipaddr.IPv4.parse('224.0.0.0'), 24)
      : ip.address.match(ipaddr.IPv6.parse('ff02::'), 16),
  );
  method<KubeIp>('net.IP', 'isLinkLocalUnicast', [], 'bool', (ip) => ipRange(ip.address) === 'linkLocal');
  method<KubeIp>('net.IP', 'isGlobalUnicast', [], 'bool', (ip) => {
    const range = ipRange(ip.address);
    // Go's IsGlobalUnicast: not unspecified, loopback, link-local, multicast or (IPv4) broadcast.
    return !['unspecified', 'loopback', 'linkLocal', 'multicast', 'broadcast'].includes(range);
  });
  method<KubeCidr>('net.CIDR', 'containsIP', ['net.IP'], 'bool', (c, ip: KubeIp) => contains(c, ip.address));
  method<KubeCidr>('net.CIDR', 'containsIP', ['string'], 'bool', (c, text: string) =>
    contains(c, orThrow(parseIp(text), 'IP Address', text).address),
  );
  method<KubeCidr>(
    'net.CIDR',
    'containsCIDR',
    ['net.CIDR'],
    'bool',
    (c, other: KubeCidr) => other.prefix >= c.prefix && contains(c, other.address),
  );
  method<KubeCidr>('net.CIDR', 'containsCIDR', ['string'], 'bool', (c, text: string) => {
    const other = orThrow(parseCidr(text), 'network address', text);
    return other.prefix >= c.prefix && contains(c, other.address);
  });
  method<KubeCidr>('net.CIDR', 'ip', [], 'net.IP', (c) => new KubeIp(c.address));
  method<KubeCidr>('net.CIDR', 'masked', [], 'net.CIDR', (c) => masked(c));
  method<KubeCidr>('net.CIDR', 'prefixLength', [], 'int', (c) => BigInt(c.prefix));
}
