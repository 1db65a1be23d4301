import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createFileExclusive, ensurePrivateDir, PRIVATE_FILE_MODE, readFileIfExists } from './files.ts';

/** Visible ASCII only: the token travels in an HTTP header and in kubeconfig files. */
const TOKEN_SYNTAX = /^[\x21-\x7e]+$/;

/**
 * Returns the admin bearer token stored in `dir/token`, creating it on first start. It is reused afterwards so
 * that kubeconfigs written earlier keep working across restarts.
 */
export async function ensureToken(dir: string): Promise<string> {
  const path = join(dir, 'token');
  const existing = await readToken(path);
  if (existing !== undefined) return existing;

  await ensurePrivateDir(dir);
  const token = randomBytes(32).toString('base64url');
  // If a concurrent start created the file first, use its token so both processes agree.
  if (await createFileExclusive(path, `${token}\n`, PRIVATE_FILE_MODE)) return token;
  const winner = await readToken(path);
  if (winner === undefined) throw new Error(`${path} disappeared while it was being created`);
  return winner;
}

async function readToken(path: string): Promise<string | undefined> {
  const content = await readFileIfExists(path);
  if (content === undefined) return undefined;
  const token = content.trim();
  // Refuse rather than replace: someone may have put their own token there, and kubeconfigs may depend on it.
  if (!TOKEN_SYNTAX.test(token)) {
    throw new Error(
      `${path} does not contain a usable token (expected one line of visible ASCII characters)`,
    );
  }
  return token;
}

/**
 * The bearer token of an Authorization header, parsed like kube-apiserver's bearer token authenticator: the
 * header is trimmed, the scheme compared case-insensitively, and the token is the second space-separated field.
 */
export function bearerToken(authorizationHeader: string | undefined): string | undefined {
  if (authorizationHeader === undefined) return undefined;
  const parts = authorizationHeader.trim().split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}

/** Whether an Authorization header carries `expected` as a bearer token. */
export function tokenMatches(expected: string, authorizationHeader: string | undefined): boolean {
  if (!expected) return false;
  const presented = bearerToken(authorizationHeader);
  if (presented === undefined) return false;
  return constantTimeEqual(presented, expected);
}

/**
 * Compares every character, with no early return at the first difference nor on a length mismatch, so the
 * time taken depends on the expected token's length alone: neither the token nor its length can be probed
 * through timing (as comparing SHA-256 digests would, without hashing on every request).
 */
function constantTimeEqual(presented: string, expected: string): boolean {
  let diff = presented.length ^ expected.length;
  // Past the presented string's end charCodeAt is NaN, which `| 0` makes 0.
  for (let i = 0; i < expected.length; i++) diff |= (presented.charCodeAt(i) | 0) ^ expected.charCodeAt(i);
  return diff === 0;
}
