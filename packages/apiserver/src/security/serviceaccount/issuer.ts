import type { ServiceAccountClaims } from './claims.ts';
import { loadJose, type ServiceAccountTokenConfig } from './config.ts';

/**
 * Signs a token's claims with the server's signing key: a compact JWS whose header names the algorithm and
 * the key id (kube-apiserver's JWTTokenGenerator sets `alg` and `kid`, no `typ`).
 */
export async function signToken(
  config: ServiceAccountTokenConfig,
  claims: ServiceAccountClaims,
): Promise<string> {
  const { SignJWT } = await loadJose();
  const { privateKey, alg, kid } = config.signingKey;
  return new SignJWT({ ...claims }).setProtectedHeader({ alg, kid }).sign(privateKey);
}
