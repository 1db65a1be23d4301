import type { SigningKey, VerificationKey } from './keys.ts';

/**
 * How the server issues and accepts ServiceAccount tokens: kube-apiserver's --service-account-issuer,
 * --api-audiences, --service-account-signing-key-file and --service-account-key-file.
 */
export interface ServiceAccountTokenOptions {
  /** --service-account-issuer, repeatable: the first is written into new tokens; tokens of any are accepted. */
  issuers: string[];
  /** --api-audiences: the audiences a token must name one of; the issuers when empty, as kube-apiserver does. */
  apiAudiences?: string[];
  /** The key new tokens are signed with. */
  signingKey: SigningKey;
  /** --service-account-key-file's keys; the signing key verifies too, whether listed or not. */
  verificationKeys?: VerificationKey[];
  /** --service-account-jwks-uri: the discovery document's jwks_uri; the server's own /openid/v1/jwks when unset. */
  jwksUri?: string;
  /** --service-account-max-token-expiration, in seconds: longer requests are shortened to it (0: no limit). */
  maxExpirationSeconds?: number;
}

/** The options with kube-apiserver's defaults filled in. */
export interface ServiceAccountTokenConfig {
  issuers: string[];
  apiAudiences: string[];
  signingKey: SigningKey;
  /** Every key a token may be signed with, by key id; the signing key first. */
  verificationKeys: VerificationKey[];
  jwksUri?: string;
  maxExpirationSeconds: number;
}

export function resolveTokenConfig(options: ServiceAccountTokenOptions): ServiceAccountTokenConfig {
  if (options.issuers.length === 0) throw new Error('at least one service account issuer is needed');
  const keys = new Map<string, VerificationKey>([[options.signingKey.kid, options.signingKey]]);
  for (const key of options.verificationKeys ?? []) if (!keys.has(key.kid)) keys.set(key.kid, key);
  return {
    issuers: options.issuers,
    apiAudiences:
      options.apiAudiences && options.apiAudiences.length > 0 ? options.apiAudiences : options.issuers,
    signingKey: options.signingKey,
    verificationKeys: [...keys.values()],
    jwksUri: options.jwksUri,
    maxExpirationSeconds: options.maxExpirationSeconds ?? 0,
  };
}

/** jose is loaded on first use: a server nobody asks for a token never pays for it (ADR 1101's lazy modules). */
let jose: typeof import('jose') | undefined;

export async function loadJose(): Promise<typeof import('jose')> {
  jose ??= await import('jose');
  return jose;
}

/** jose when already loaded, for the paths that must stay synchronous. */
export function loadedJose(): typeof import('jose') | undefined {
  return jose;
}
