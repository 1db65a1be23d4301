/**
 * `/.well-known/openid-configuration` and `/openid/v1/jwks`: the ServiceAccount issuer discovery documents,
 * served as kube-apiserver serves them (GET only, cacheable for an hour by anyone), to anonymous clients too.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { newMethodNotAllowed, newNotFound } from '@certkit/apimachinery';
import {
  DISCOVERY_CACHE_CONTROL,
  JWKS_MEDIA_TYPE,
  JWKS_PATH,
  OPENID_CONFIGURATION_PATH,
} from '../security/serviceaccount/oidc.ts';
import type { ServiceAccountTokens } from '../security/serviceaccount/tokens.ts';

export const ISSUER_DISCOVERY_PATHS = [OPENID_CONFIGURATION_PATH, JWKS_PATH];

export function serveIssuerDiscovery(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  tokens: ServiceAccountTokens | undefined,
  defaultJwksUri: string,
): void {
  const documents = tokens?.discovery(tokens.config.jwksUri ?? defaultJwksUri);
  if (!documents) {
    const err = newNotFound({ group: '', resource: '' }, '');
    err.status.message = 'the server could not find the requested resource';
    err.status.details = {};
    throw err;
  }
  if (req.method !== 'GET') throw newMethodNotAllowed();
  const jwks = path === JWKS_PATH;
  const body = jwks ? documents.jwks : documents.configuration;
  res.writeHead(200, {
    'Content-Type': jwks ? JWKS_MEDIA_TYPE : 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': DISCOVERY_CACHE_CONTROL,
  });
  res.end(body);
}
