/**
 * The DNS-01 lookups cert-manager makes (pkg/issuer/acme/dns/util/cache.go `CachingResolver`, wait.go):
 *
 * - the zone of a name: ask SOA for the name and each parent in turn; NXDOMAIN or an answer holding a CNAME
 *   means "go up", another non-NOERROR RCODE is an error, the first SOA in an answer names the zone;
 * - the zone's authoritative nameservers: its NS set;
 * - CNAME following from `_acme-challenge.<name>.` (a loop is an error);
 * - propagation: every server asked holds the TXT value; NXDOMAIN just means "not yet". The servers asked are
 *   the check servers themselves (`--dns01-recursive-nameservers-only`, or a solver's own `nameservers`), or
 *   the zone's NS hosts on port 53.
 *
 * SOA and NS answers are cached per check server for their TTL, as upstream does.
 */

import { formatNameserver, type Nameserver } from './nameserver.ts';
import { dnsQuery, type QueryOptions, tryEachNameserver } from './query.ts';
import { type DecodedMessage, fqdn as toFqdn, Rcode, RRType, rcodeName, sameName } from './wire.ts';

export interface DNS01ResolverOptions {
  /** Per-exchange deadline (default 10 s, cert-manager's). */
  timeoutMs?: number;
  /**
   * The port the zone's NS hosts are asked on in authoritative mode: 53 as in cert-manager, which hard-codes it;
   * tests with an unprivileged server set their port here.
   */
  authoritativePort?: number;
  /** CAs trusted for DoH check servers instead of the system's (PEM). */
  dohCA?: string;
  /** Clock for the cache, in ms. */
  now?: () => number;
}

interface CacheEntry {
  value: string[];
  expires: number;
}

const MAX_CACHE_ENTRIES = 10_000;

function describe(servers: readonly Nameserver[]): string {
  return `[${servers.map(formatNameserver).join(' ')}]`;
}

/** The name and each of its parents, below the root: a.b.c. → a.b.c., b.c., c. */
function selfAndParents(name: string): string[] {
  const labels = toFqdn(name).slice(0, -1).split('.');
  return labels.map((_, i) => `${labels.slice(i).join('.')}.`);
}

export class DNS01Resolver {
  readonly #options: DNS01ResolverOptions;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(options: DNS01ResolverOptions = {}) {
    this.#options = options;
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  #queryOptions(signal?: AbortSignal): QueryOptions {
    return { timeoutMs: this.#options.timeoutMs, signal, dohCA: this.#options.dohCA };
  }

  async #ask(
    name: string,
    type: number,
    servers: readonly Nameserver[],
    signal?: AbortSignal,
  ): Promise<DecodedMessage> {
    return (await dnsQuery(name, type, servers, this.#queryOptions(signal))).message;
  }

  #cached(type: string, server: Nameserver, name: string): string[] | undefined {
    const key = `${type} ${formatNameserver(server)} ${name.toLowerCase()}`;
    const entry = this.#cache.get(key);
    if (!entry) return undefined;
    if (entry.expires > this.#now()) return entry.value;
    this.#cache.delete(key);
    return undefined;
  }

  #remember(type: string, server: Nameserver, name: string, value: string[], ttlSeconds: number): void {
    if (this.#cache.size >= MAX_CACHE_ENTRIES) {
      const now = this.#now();
      for (const [key, entry] of this.#cache) if (entry.expires <= now) this.#cache.delete(key);
      if (this.#cache.size >= MAX_CACHE_ENTRIES) this.#cache.clear();
    }
    this.#cache.set(`${type} ${formatNameserver(server)} ${name.toLowerCase()}`, {
      value,
      expires: this.#now() + ttlSeconds * 1000,
    });
  }

  /** The apex of the zone holding `name`, absolute (`example.test.`). */
  async findZone(name: string, servers: readonly Nameserver[], signal?: AbortSignal): Promise<string> {
    const fqdn = toFqdn(name);
    for (const server of servers) {
      const hit = this.#cached('SOA', server, fqdn);
      if (hit) return hit[0];
    }
    return tryEachNameserver(servers, async (server) => {
      for (const domain of selfAndParents(fqdn)) {
        const reply = await this.#ask(domain, RRType.SOA, [server], signal);
        if (reply.rcode === Rcode.NXDOMAIN) continue;
        if (reply.rcode !== Rcode.NOERROR) {
          throw new Error(
            `When querying the SOA record for the domain '${domain}' using nameservers ${describe(servers)}, ` +
              `rcode was expected to be 'NOERROR' or 'NXDOMAIN', but got '${rcodeName(reply.rcode)}'`,
          );
        }
        // A CNAME cannot sit at a zone's apex (RFC 2181 §10.1), so no SOA here.
        if (reply.answers.some((rr) => rr.type === RRType.CNAME)) continue;
        const soa = reply.answers.find((rr) => rr.type === RRType.SOA);
        if (soa) {
          this.#remember('SOA', server, fqdn, [soa.name], soa.ttl);
          return soa.name;
        }
      }
      throw new Error(
        `Could not find the SOA record in the DNS tree for the domain '${fqdn}' using nameservers ${describe(servers)}`,
      );
    });
  }

  /** The host names of the NS records of the zone holding `name`, lower case, absolute. */
  async authoritativeNameservers(
    name: string,
    servers: readonly Nameserver[],
    signal?: AbortSignal,
  ): Promise<string[]> {
    const fqdn = toFqdn(name);
    for (const server of servers) {
      const hit = this.#cached('NS', server, fqdn);
      if (hit) return hit;
    }
    return tryEachNameserver(servers, async (server) => {
      let zone: string;
      try {
        zone = await this.findZone(fqdn, [server], signal);
      } catch (err) {
        throw new Error(`Could not determine the zone for "${fqdn}": ${(err as Error).message}`);
      }
      const reply = await this.#ask(zone, RRType.NS, [server], signal);
      const records = reply.answers.filter((rr) => rr.type === RRType.NS && rr.target);
      if (records.length === 0)
        throw new Error(`Could not determine authoritative nameservers for "${fqdn}"`);
      const hosts = records.map((rr) => rr.target!.toLowerCase());
      this.#remember('NS', server, fqdn, hosts, Math.min(...records.map((rr) => rr.ttl)));
      return hosts;
    });
  }

  /** Where the CNAME chain from `name` ends (the name itself when it has none). */
  async followCNAMEs(name: string, servers: readonly Nameserver[], signal?: AbortSignal): Promise<string> {
    const seen: string[] = [];
    let current = toFqdn(name);
    for (;;) {
      const reply = await this.#ask(current, RRType.CNAME, servers, signal);
      if (reply.rcode !== Rcode.NOERROR) return current;
      const cname = reply.answers.find((rr) => rr.type === RRType.CNAME && sameName(rr.name, current));
      if (!cname?.target) return current;
      seen.push(current);
      if (seen.some((name) => sameName(name, cname.target!))) {
        throw new Error(`Found recursive CNAME record to "${cname.target}" when looking up "${current}"`);
      }
      current = cname.target;
    }
  }

  /** Whether every one of `servers` answers `name` with the TXT value (NXDOMAIN: not yet). */
  async serversHoldTXT(
    name: string,
    value: string,
    servers: readonly Nameserver[],
    signal?: AbortSignal,
  ): Promise<boolean> {
    for (const server of servers) {
      const reply = await this.#ask(name, RRType.TXT, [server], signal);
      if (reply.rcode !== Rcode.NOERROR && reply.rcode !== Rcode.NXDOMAIN) {
        throw new Error(
          `NS ${formatNameserver(server)} returned ${rcodeName(reply.rcode)} for ${toFqdn(name)}`,
        );
      }
      const found = reply.answers.some((rr) => rr.type === RRType.TXT && rr.texts?.join('') === value);
      if (!found) return false;
    }
    return true;
  }

  /**
   * cert-manager's `CheckTXTRecordPropagation`: follows the CNAMEs from `name` through `servers`, then asks
   * `servers` themselves (`authoritative: false`) or the zone's NS hosts whether they hold the value.
   */
  async checkTXTPropagation(
    name: string,
    value: string,
    servers: readonly Nameserver[],
    authoritative: boolean,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const target = await this.followCNAMEs(name, servers, signal);
    if (!authoritative) return this.serversHoldTXT(target, value, servers, signal);
    const hosts = await this.authoritativeNameservers(target, servers, signal);
    const port = this.#options.authoritativePort ?? 53;
    const authorities: Nameserver[] = hosts.map((host) => ({
      kind: 'dns',
      host: host.replace(/\.$/, ''),
      port,
    }));
    return this.serversHoldTXT(target, value, authorities, signal);
  }
}
