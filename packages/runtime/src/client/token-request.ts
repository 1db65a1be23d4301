import type { KubeObject } from '@certkit/apimachinery';
import type { CredentialProvider, Credentials } from './config.ts';
import type { ResourceClient } from './types.ts';

/**
 * A ServiceAccount's bearer token obtained from the TokenRequest API (`serviceaccounts/<name>/token`) and
 * requested again before it expires, as the kubelet does for projected service account tokens: a token is
 * used until 80% of its lifetime has passed, then replaced. The credentials of a controller that runs next to
 * the API server under its own identity, without a token file on disk.
 */
export interface TokenRequestOptions {
  namespace: string;
  /** The ServiceAccount's name. */
  name: string;
  /** Requested lifetime; default 3600 (TokenRequest's default). The server may shorten it. */
  expirationSeconds?: number;
  /** Audiences; default none, which means the API server's own. */
  audiences?: string[];
  /** Clock, for tests. */
  now?: () => number;
}

/** The kubelet's rule: a token is refreshed once 80% of its lifetime has passed. */
export const TOKEN_REFRESH_FRACTION = 0.8;

/** How long a still-valid token is used after a failed refresh before the next attempt. */
const RETRY_AFTER_FAILURE_MS = 10_000;

interface TokenRequest extends KubeObject {
  spec: { audiences?: string[]; expirationSeconds?: number };
  status?: { token?: string; expirationTimestamp?: string };
}

/**
 * Credentials from TokenRequests made with `serviceAccounts` (a client for core/v1 serviceaccounts whose own
 * identity may create tokens). If a refresh fails while the current token is still valid, the current token
 * is kept and the next request tries again: a brief API server hiccup must not fail the controller's
 * requests.
 */
export function tokenRequestCredentials(
  serviceAccounts: ResourceClient,
  options: TokenRequestOptions,
): CredentialProvider {
  const now = options.now ?? Date.now;
  let current: { credentials: Credentials; refreshAt: number; expiresAt: number } | undefined;
  let requesting: Promise<Credentials> | undefined;

  const request = async (): Promise<Credentials> => {
    const issuedAt = now();
    try {
      const answer = (await serviceAccounts.create(
        options.namespace,
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          metadata: { name: options.name, namespace: options.namespace },
          spec: {
            ...(options.audiences ? { audiences: options.audiences } : {}),
            expirationSeconds: options.expirationSeconds ?? 3600,
          },
        } as TokenRequest,
        { subresource: 'token' },
      )) as TokenRequest;
      const token = answer.status?.token;
      const expiresAt = Date.parse(answer.status?.expirationTimestamp ?? '');
      if (!token || Number.isNaN(expiresAt)) {
        throw new Error('the TokenRequest answer has no status.token and expirationTimestamp');
      }
      current = {
        credentials: Object.freeze({ token }),
        refreshAt: issuedAt + (expiresAt - issuedAt) * TOKEN_REFRESH_FRACTION,
        expiresAt,
      };
      return current.credentials;
    } catch (err) {
      if (current && now() < current.expiresAt) {
        // Try again in a while, not on every request.
        current.refreshAt = Math.min(current.expiresAt, now() + RETRY_AFTER_FAILURE_MS);
        return current.credentials;
      }
      throw new Error(
        `requesting a token for ServiceAccount ${options.namespace}/${options.name}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  };

  return {
    get() {
      if (current && now() < current.refreshAt) return Promise.resolve(current.credentials);
      requesting ??= request().finally(() => {
        requesting = undefined;
      });
      return requesting;
    },
    invalidate(used) {
      // A 401 with the current token (the ServiceAccount was recreated, the server's key changed): ask anew.
      if (used === current?.credentials) current = undefined;
    },
  };
}
