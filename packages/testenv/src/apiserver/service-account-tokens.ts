import { generateKeyPairSync } from 'node:crypto';
import type { ApiServerOptions } from '@certkit/apiserver';
import { signingKeyFromPem } from '@certkit/apiserver/security/serviceaccount/keys';

/** The issuer `certkit up` writes into ServiceAccount tokens by default (the in-cluster API server's name). */
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** ServiceAccount tokens on, as `certkit up` has them (with its default issuer), on a fresh key of the test's own. */
export function testServiceAccountTokens(): NonNullable<ApiServerOptions['serviceAccountTokens']> {
  return {
    issuers: [SERVICE_ACCOUNT_ISSUER],
    signingKey: signingKeyFromPem(
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
        type: 'pkcs8',
        format: 'pem',
      }) as string,
      'test signing key',
    ),
  };
}
