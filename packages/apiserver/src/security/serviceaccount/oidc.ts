import type { ServiceAccountTokenConfig } from './config.ts';

/**
 * Service account issuer discovery, as kube-apiserver serves it: an OpenID Connect discovery document at
 * `/.well-known/openid-configuration` and the public keys at `/openid/v1/jwks`, so that a relying party
 * outside the cluster can verify ServiceAccount tokens (workload identity federation) knowing the issuer alone.
 */

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
export const JWKS_MEDIA_TYPE = 'application/jwk-set+json';
/** kube-apiserver lets caches keep both documents for an hour. */
export const DISCOVERY_CACHE_CONTROL = 'public, max-age=3600';

export interface DiscoveryDocuments {
  configuration: string;
  jwks: string;
}

/**
 * The two documents, rendered once. kube-apiserver installs the endpoints only for an https issuer without
 * query or fragment (OpenID Connect requires it): undefined otherwise, and the paths are not served.
 */
export function discoveryDocuments(
  config: ServiceAccountTokenConfig,
  jwksUri: string,
): DiscoveryDocuments | undefined {
  const issuer = config.issuers[0];
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.search !== '' || url.hash !== '') return undefined;
  const keys = config.verificationKeys.map(({ key, alg, kid }) => ({
    use: 'sig',
    ...key.export({ format: 'jwk' }),
    kid,
    alg,
  }));
  const algorithms = [...new Set(keys.map((k) => k.alg))].sort();
  return {
    configuration: JSON.stringify({
      issuer,
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: algorithms,
    }),
    jwks: JSON.stringify({ keys }),
  };
}
