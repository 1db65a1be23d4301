/**
 * The DNS-01 solver as the Challenge controller uses it (cert-manager's pkg/issuer/acme/dns/dns.go): present,
 * check and clean up one Challenge through the provider its solver names.
 *
 * - Present and CleanUp write at `_acme-challenge.<dnsName>.`, or where its CNAMEs lead when the solver says
 *   `cnameStrategy: Follow`, in the zone the SOA walk finds for that name (both through the check servers).
 * - Check always follows CNAMEs, then asks the zone's authoritative servers, or only the check servers with
 *   `recursiveOnly` (`--dns01-recursive-nameservers-only`) or when the solver lists its own `nameservers`.
 *   cert-manager then sleeps 60 s before accepting the challenge; that wait is the caller's
 *   (`DNS01_PROPAGATION_WAIT_MS`), so this module never blocks a worker.
 */

import { NameserverError, parseCheckNameserver, systemNameservers, type Nameserver } from './nameserver.ts';
import { DNS01Resolver } from './propagation.ts';
import {
  DNS01ConfigError,
  DNS01ProviderRegistry,
  type DNS01ChangeRequest,
  type DNS01Provider,
  type SecretReader,
} from './provider.ts';
import { rfc2136Provider } from './rfc2136.ts';

/** How long cert-manager waits after a successful check before it accepts a DNS-01 challenge. */
export const DNS01_PROPAGATION_WAIT_MS = 60_000;

/** The providers certkit implements, keyed by their `dns01` block. */
export function defaultDNS01Providers(options: { timeoutMs?: number } = {}): DNS01ProviderRegistry {
  return new DNS01ProviderRegistry([rfc2136Provider(options)]);
}

/** What the solver needs of a Challenge. */
export interface DNS01Challenge {
  /** `spec.dnsName`, without `*.`. */
  dnsName: string;
  /** `spec.key`: the TXT value. */
  key: string;
  /** `spec.solver.dns01`. */
  dns01: Readonly<Record<string, unknown>>;
  /** Where Secret references resolve: the Issuer's namespace, or the cluster resource namespace. */
  resourceNamespace: string;
  /** ClusterIssuers may use ambient credentials (cert-manager's `--cluster-issuer-ambient-credentials`). */
  allowAmbientCredentials?: boolean;
}

export interface DNS01SolverOptions {
  secrets: SecretReader;
  /** `--dns01-recursive-nameservers`: `host:port` or `https://` DoH URLs; default: the system's resolvers. */
  recursiveNameservers?: readonly string[];
  /** `--dns01-recursive-nameservers-only`: check only those servers, never the zone's own. */
  recursiveOnly?: boolean;
  registry?: DNS01ProviderRegistry;
  /** Per-exchange deadline for the check's queries and the providers' updates (default 10 s). */
  timeoutMs?: number;
  /** Port of the zone's NS hosts in the authoritative check (53; tests change it). */
  authoritativePort?: number;
  /** CAs trusted for `https://` check servers instead of the system's (PEM). */
  dohCA?: string;
}

/** Parses `--dns01-recursive-nameservers` entries, naming the bad one. */
export function parseRecursiveNameservers(values: readonly string[]): Nameserver[] {
  return values.map((value) => parseCheckNameserver(value));
}

export class DNS01Solver {
  readonly #secrets: SecretReader;
  readonly #registry: DNS01ProviderRegistry;
  readonly #resolver: DNS01Resolver;
  readonly #servers: Nameserver[];
  readonly #recursiveOnly: boolean;

  constructor(options: DNS01SolverOptions) {
    this.#secrets = options.secrets;
    this.#registry = options.registry ?? defaultDNS01Providers({ timeoutMs: options.timeoutMs });
    this.#resolver = new DNS01Resolver({
      timeoutMs: options.timeoutMs,
      authoritativePort: options.authoritativePort,
      dohCA: options.dohCA,
    });
    this.#servers =
      options.recursiveNameservers && options.recursiveNameservers.length > 0
        ? parseRecursiveNameservers(options.recursiveNameservers)
        : systemNameservers();
    this.#recursiveOnly = options.recursiveOnly ?? false;
  }

  /** The check servers for a solver, and whether to go on to the zone's own servers. */
  #checkServers(dns01: Readonly<Record<string, unknown>>): { servers: Nameserver[]; authoritative: boolean } {
    const own = dns01.nameservers;
    if (Array.isArray(own) && own.length > 0) {
      try {
        return { servers: own.map((value) => parseCheckNameserver(String(value))), authoritative: false };
      } catch (err) {
        if (err instanceof NameserverError) throw new DNS01ConfigError(`dns01.nameservers: ${err.message}`);
        throw err;
      }
    }
    return { servers: this.#servers, authoritative: !this.#recursiveOnly };
  }

  /**
   * The provider the Challenge's `dns01` block names, its config and the check servers: a function of that block
   * alone, so one that fails here failed the same way when the Challenge was presented.
   */
  #select(dns01: Readonly<Record<string, unknown>>): {
    provider: DNS01Provider;
    config: Readonly<Record<string, unknown>>;
    servers: Nameserver[];
  } {
    const { provider, config } = this.#registry.select(dns01);
    return { provider, config, servers: this.#checkServers(dns01).servers };
  }

  /** The record's name and zone, and the provider that writes it. */
  async #prepare(
    challenge: DNS01Challenge,
    signal?: AbortSignal,
    selected = this.#select(challenge.dns01),
  ): Promise<{ provider: DNS01Provider; request: DNS01ChangeRequest }> {
    const { provider, config, servers } = selected;
    let fqdn = `_acme-challenge.${challenge.dnsName}.`;
    if (challenge.dns01.cnameStrategy === 'Follow') {
      fqdn = await this.#resolver.followCNAMEs(fqdn, servers, signal);
    }
    const zone = await this.#resolver.findZone(fqdn, servers, signal);
    return {
      provider,
      request: {
        dnsName: challenge.dnsName,
        fqdn,
        zone,
        value: challenge.key,
        config,
        resourceNamespace: challenge.resourceNamespace,
        secrets: this.#secrets,
        allowAmbientCredentials: challenge.allowAmbientCredentials ?? false,
        signal,
      },
    };
  }

  /** Adds the Challenge's TXT value. */
  async present(challenge: DNS01Challenge, signal?: AbortSignal): Promise<void> {
    const { provider, request } = await this.#prepare(challenge, signal);
    await provider.present(request);
  }

  /**
   * Removes the Challenge's TXT value (and only it). A `dns01` block that names no provider certkit has, or
   * several, or bad `nameservers`, failed present the same way, so nothing was written and there is nothing
   * to remove: cleaning up succeeds, and a deleted Challenge loses its finalizer instead of keeping it forever
   * (and, through the scheduler, holding back every later DNS-01 Challenge for the same name).
   */
  async cleanUp(challenge: DNS01Challenge, signal?: AbortSignal): Promise<void> {
    let selected;
    try {
      selected = this.#select(challenge.dns01);
    } catch (err) {
      if (err instanceof DNS01ConfigError) return;
      throw err;
    }
    const { provider, request } = await this.#prepare(challenge, signal, selected);
    await provider.cleanUp(request);
  }

  /**
   * The self-check: resolves when every server asked holds the value; throws `DNS record for "<name>" not yet
   * propagated` when one does not yet, and the lookup's error when one fails.
   */
  async check(challenge: DNS01Challenge, signal?: AbortSignal): Promise<void> {
    const { servers, authoritative } = this.#checkServers(challenge.dns01);
    const fqdn = `_acme-challenge.${challenge.dnsName}.`;
    const ok = await this.#resolver.checkTXTPropagation(fqdn, challenge.key, servers, authoritative, signal);
    if (!ok) throw new Error(`DNS record for "${challenge.dnsName}" not yet propagated`);
  }
}
