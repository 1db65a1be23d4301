import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ensureToken, tokenMatches } from './token.ts';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('ensureToken', () => {
  it('creates a random base64url token in a 0600 file and reuses it', async (t) => {
    const dir = await tempDir(t);
    const token = await ensureToken(dir);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 bytes, base64url without padding');
    assert.equal(Buffer.from(token, 'base64url').length, 32);
    const path = join(dir, 'token');
    assert.equal((await readFile(path, 'utf8')).trim(), token);
    assert.equal((await stat(path)).mode & 0o777, 0o600);

    assert.equal(await ensureToken(dir), token);
    assert.notEqual(await ensureToken(await tempDir(t)), token);
    assert.deepEqual(await readdir(dir), ['token'], 'no temp files left behind');
  });

  it('creates the directory when it does not exist', async (t) => {
    const dir = join(await tempDir(t), 'state', 'nested');
    const token = await ensureToken(dir);
    assert.equal(await ensureToken(dir), token);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
  });

  it('hands concurrent first starts the same token', async (t) => {
    const dir = await tempDir(t);
    const tokens = await Promise.all(Array.from({ length: 8 }, () => ensureToken(dir)));
    assert.equal(new Set(tokens).size, 1);
    assert.equal((await readFile(join(dir, 'token'), 'utf8')).trim(), tokens[0]);
  });

  it('keeps a token written by hand', async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'token'), '  my-own.token~1  \n', { mode: 0o600 });
    assert.equal(await ensureToken(dir), 'my-own.token~1');
  });

  it('refuses a token file it cannot use instead of overwriting it', async (t) => {
    const dir = await tempDir(t);
    for (const content of ['', '\n', 'two words', 'ünïcode']) {
      await writeFile(join(dir, 'token'), content);
      await assert.rejects(ensureToken(dir), /does not contain a usable token/, JSON.stringify(content));
      assert.equal(await readFile(join(dir, 'token'), 'utf8'), content);
    }
  });
});

describe('tokenMatches', () => {
  const token = 'Zm9vYmFyYmF6cXV4LXNlY3JldC10b2tlbi12YWx1ZQ';

  it('accepts the token with a case-insensitive Bearer scheme', () => {
    assert.equal(tokenMatches(token, `Bearer ${token}`), true);
    assert.equal(tokenMatches(token, `bearer ${token}`), true);
    assert.equal(tokenMatches(token, `BEARER ${token}`), true);
    assert.equal(tokenMatches(token, `  Bearer ${token}  `), true);
  });

  it('rejects a wrong token, including one of a different length', () => {
    assert.equal(tokenMatches(token, `Bearer ${token.slice(0, -1)}x`), false);
    assert.equal(tokenMatches(token, `Bearer ${token.slice(0, -1)}`), false);
    assert.equal(tokenMatches(token, `Bearer ${token}x`), false);
    assert.equal(tokenMatches(token, 'Bearer x'), false);
    assert.equal(tokenMatches(token, `Bearer ${token.toUpperCase()}`), false);
  });

  it('rejects other schemes and malformed headers', () => {
    assert.equal(tokenMatches(token, `Basic ${token}`), false);
    assert.equal(tokenMatches(token, `Token ${token}`), false);
    assert.equal(tokenMatches(token, token), false);
    assert.equal(tokenMatches(token, `Bearer${token}`), false);
    assert.equal(tokenMatches(token, `Bearer  ${token}`), false);
    assert.equal(tokenMatches(token, 'Bearer'), false);
    assert.equal(tokenMatches(token, 'Bearer '), false);
  });

  it('rejects a missing header', () => {
    assert.equal(tokenMatches(token, undefined), false);
    assert.equal(tokenMatches(token, ''), false);
  });

  it('never matches when no token is expected', () => {
    assert.equal(tokenMatches('', 'Bearer '), false);
    assert.equal(tokenMatches('', 'Bearer x'), false);
  });
});
