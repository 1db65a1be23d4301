/**
 * What a DNS-01 provider is, and the registry that picks one for a solver's `dns01` block.
 *
 * A provider adds and removes one TXT value at one name. It is one file (rfc2136.ts is the first) exporting a
 * `DNS01Provider` whose `name` is the key of its block under `dns01` in cert-manager's API (`rfc2136`,
 * `cloudflare`, `route53`, `cloudDNS`, `azureDNS`, `digitalocean`, `acmeDNS`, `akamai`, `webhook`); adding it to
 * `defaultDNS01Providers()` (solver.ts) is all the wiring there is. Providers read their credentials through
 * the injected `SecretReader`, so they run against a plain function in tests and against the Secret cache in
 * the controller.
 */

import type { SecretKeySelector } from '../../api/types.ts';
import type { SecretGetter } from '../../controllers/context.ts';

/** A Secret's data, decoded from base64. */
export type SecretData = Readonly<Record<string, Buffer>>;

/** Returns the data of the Secret `namespace/name`, or undefined when there is no such Secret. */
export type SecretReader = (namespace: string, name: string) => Promise<SecretData | undefined>;

/** A SecretReader over the controller's Secret getter (`ctx.secrets`): the Secret's `data`, base64-decoded. */
export function secretReaderFrom(getter: Pick<SecretGetter, 'getWithData'>): SecretReader {
  return async (namespace, name) => {
    const secret = await getter.getWithData(namespace, name);
    if (secret === undefined) return undefined;
    return Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    );
  };
}

/** One TXT change for a provider to make. */
export interface DNS01ChangeRequest {
  /** The Challenge's `spec.dnsName` (without `*.`). */
  dnsName: string;
  /** Where the TXT record goes, absolute: `_acme-challenge.<dnsName>.` or where its CNAMEs lead. */
  fqdn: string;
  /** The zone holding `fqdn`, absolute, as the SOA walk found it. */
  zone: string;
  /** The TXT value (the Challenge's `spec.key`). */
  value: string;
  /** The provider's own block, e.g. the solver's `dns01.rfc2136`. */
  config: Readonly<Record<string, unknown>>;
  /** Where the provider's Secret references are resolved: the Issuer's namespace, or the cluster resource one. */
  resourceNamespace: string;
  secrets: SecretReader;
  /** Whether the provider may use credentials from its environment (ClusterIssuers, as cert-manager). */
  allowAmbientCredentials: boolean;
  signal?: AbortSignal;
}

export interface DNS01Provider {
  /** The key of the provider's block under `dns01`. */
  readonly name: string;
  /** Adds the TXT value at `fqdn`, keeping any other values there (a wildcard and its apex share a name). */
  present(request: DNS01ChangeRequest): Promise<void>;
  /** Removes exactly that TXT value at `fqdn`. */
  cleanUp(request: DNS01ChangeRequest): Promise<void>;
}

/** The provider keys of cert-manager's `ACMEChallengeSolverDNS01` (pkg/apis/acme/v1/types_issuer.go). */
export const DNS01_PROVIDER_KEYS = [
  'acmeDNS',
  'akamai',
  'azureDNS',
  'cloudDNS',
  'cloudflare',
  'digitalocean',
  'rfc2136',
  'route53',
  'webhook',
] as const;

/**
 * A solver's configuration a provider cannot work with: no or several providers, one certkit does not implement,
 * a missing Secret or field. Retrying does not help until someone edits the Issuer or the Secret.
 */
export class DNS01ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DNS01ConfigError';
  }
}

export class DNS01ProviderRegistry {
  readonly #providers = new Map<string, DNS01Provider>();

  constructor(providers: Iterable<DNS01Provider>) {
    for (const provider of providers) {
      if (this.#providers.has(provider.name)) {
        throw new Error(`two DNS-01 providers are named ${JSON.stringify(provider.name)}`);
      }
      this.#providers.set(provider.name, provider);
    }
  }

  /** The names of the providers certkit has, sorted. */
  names(): string[] {
    return [...this.#providers.keys()].sort();
  }

  /**
   * The provider and its block for a solver's `dns01`: exactly one provider must be set, and certkit must have
   * it; otherwise a DNS01ConfigError that names the provider.
   */
  select(dns01: Readonly<Record<string, unknown>>): {
    provider: DNS01Provider;
    config: Readonly<Record<string, unknown>>;
  } {
    const keys = new Set<string>([...DNS01_PROVIDER_KEYS, ...this.#providers.keys()]);
    const set = [...keys].filter((key) => dns01[key] !== undefined && dns01[key] !== null);
    if (set.length === 0) throw new DNS01ConfigError('no DNS01 provider configured');
    if (set.length > 1) {
      throw new DNS01ConfigError(`only one DNS01 provider may be configured, found ${set.join(', ')}`);
    }
    const name = set[0];
    const provider = this.#providers.get(name);
    if (!provider) {
      throw new DNS01ConfigError(
        `the DNS01 provider "${name}" is not implemented by certkit (implemented: ${this.names().join(', ')})`,
      );
    }
    const config = dns01[name];
    if (typeof config !== 'object' || Array.isArray(config)) {
      throw new DNS01ConfigError(`the DNS01 provider "${name}" must be configured with an object`);
    }
    return { provider, config: config as Record<string, unknown> };
  }
}

/**
 * Reads one value of a Secret a provider's config refers to. `what` names it in errors, e.g. "rfc2136 TSIG
 * secret"; `defaultKey` applies when the selector has no `key` (cert-manager's `loadSecretKeySelector`).
 */
export async function readSecretKey(
  request: Pick<DNS01ChangeRequest, 'secrets' | 'resourceNamespace'>,
  selector: SecretKeySelector,
  what: string,
  defaultKey = '',
): Promise<Buffer> {
  const key = selector.key || defaultKey;
  if (!key) throw new DNS01ConfigError(`${what}: key of data in Secret resource must be specified`);
  const data = await request.secrets(request.resourceNamespace, selector.name);
  if (data === undefined) {
    throw new DNS01ConfigError(`${what}: Secret ${request.resourceNamespace}/${selector.name} not found`);
  }
  const value = data[key];
  if (value === undefined) {
    throw new DNS01ConfigError(
      `${what}: data entry with key "${key}" not found in Secret ${request.resourceNamespace}/${selector.name}`,
    );
  }
  return value;
}
