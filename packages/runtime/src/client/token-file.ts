import { readFile } from 'node:fs/promises';
import type { CredentialProvider, Credentials } from './config.ts';

/**
 * A bearer token read from a file that rotates (projected service account tokens are replaced about hourly),
 * re-read at most every `refreshMs` as client-go's cachedFileTokenSource does (1 minute). If a re-read fails
 * the last good token is kept: a rotation in progress must not fail requests.
 */
export interface TokenFileOptions {
  /** How long a read token is used before the file is read again. Default 60 000 ms. */
  refreshMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export const TOKEN_FILE_REFRESH_MS = 60_000;

/**
 * Bearer token credentials read from a file and re-read periodically, as client-go does for a rotating
 * service account token.
 */
export function tokenFileCredentials(path: string, options: TokenFileOptions = {}): CredentialProvider {
  const refreshMs = options.refreshMs ?? TOKEN_FILE_REFRESH_MS;
  const now = options.now ?? Date.now;
  let current: Credentials | undefined;
  let readAt = -Infinity;
  let reading: Promise<Credentials> | undefined;

  const read = async (): Promise<Credentials> => {
    try {
      const token = (await readFile(path, 'utf8')).trim();
      if (token === '') throw new Error(`read empty token from file "${path}"`);
      // Same object while the token is unchanged: the transport and invalidate() compare by identity.
      if (current?.token !== token) current = Object.freeze({ token });
      readAt = now();
      return current;
    } catch (err) {
      if (current) {
        readAt = now();
        return current;
      }
      throw new Error(`reading token file "${path}": ${(err as Error).message}`, { cause: err });
    }
  };

  return {
    get() {
      if (current && now() - readAt < refreshMs) return Promise.resolve(current);
      reading ??= read().finally(() => {
        reading = undefined;
      });
      return reading;
    },
    invalidate(used) {
      // A 401 may mean the token rotated under us: read the file again on the next request.
      if (used === current) readAt = -Infinity;
    },
  };
}
