import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { callApi, runCli, startCli, type RunningCli } from '@certkit/testenv/cli/cli-process';
import { kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

/**
 * ServiceAccount tokens from `certkit apiserver` as a process: the signing key it generates in the data dir
 * (owner-only, kept across restarts, so tokens outlive a restart), the --service-account-* and
 * --api-audiences flags, key rotation through --service-account-key-file, and bad key files refused at start.
 */

async function withDataDir(test: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-sa-'));
  try {
    await test(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** kubectl on the data dir's kubeconfig; with `token`, that token instead of the admin's. */
function kubectlOn(dir: string, token?: string) {
  const k = kubectlFor({ ...process.env, KUBECONFIG: join(dir, 'kubeconfig') }, dir);
  return {
    ...k,
    run: (...args: string[]) => k.run(...(token ? ['--token', token] : []), ...args),
  };
}

async function issue(dir: string, cli: RunningCli, sa: string, ...flags: string[]): Promise<string> {
  const created = await callApi(dir, cli.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
    metadata: { name: sa },
  });
  assert.ok(created.status === 201 || created.status === 409, JSON.stringify(created.json));
  const r = await kubectlOn(dir).run('create', 'token', sa, ...flags);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

/**
 * Whether the server authenticates `token`: `kubectl auth whoami` (a SelfSubjectReview, which RBAC grants every
 * authenticated user) answers with the ServiceAccount's user, or kubectl says it is not logged in.
 */
async function works(dir: string, token: string): Promise<boolean> {
  const r = await kubectlOn(dir, token).run('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
  if (r.code === 0) {
    assert.match(r.stdout, /^system:serviceaccount:default:/);
    return true;
  }
  assert.match(r.stderr, /You must be logged in to the server/);
  return false;
}

describe('certkit apiserver ServiceAccount tokens', { skip: kubectlSkip }, () => {
  it('generates sa.key 0600 in the data dir and keeps it: tokens survive a restart', async () => {
    await withDataDir(async (dir) => {
      const args = ['apiserver', '--data-dir', dir, '--port', '0'];
      let cli = await startCli(args, { umask: '000' });
      try {
        assert.equal(((await stat(join(dir, 'sa.key'))).mode & 0o777).toString(8), '600');
        const key = await readFile(join(dir, 'sa.key'), 'utf8');
        assert.match(key, /^-----BEGIN PRIVATE KEY-----/);
        const token = await issue(dir, cli, 'survivor');
        assert.equal(decodeJwt(token).iss, 'https://kubernetes.default.svc.cluster.local');
        assert.equal(await works(dir, token), true);
        await cli.stop();
        cli = await startCli(args);
        assert.equal(await readFile(join(dir, 'sa.key'), 'utf8'), key, 'the key was replaced');
        assert.equal(await works(dir, token), true, 'a token issued before the restart was refused');
      } finally {
        await cli.stop();
      }
    });
  });

  it('signs with --service-account-signing-key-file and still accepts the old key given as --service-account-key-file', async () => {
    await withDataDir(async (dir) => {
      const base = ['apiserver', '--data-dir', dir, '--port', '0'];
      let cli = await startCli(base);
      let old: string;
      try {
        old = await issue(dir, cli, 'rotating');
      } finally {
        await cli.stop();
      }
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const newKey = join(dir, 'new-sa.key');
      await writeFile(newKey, privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
      cli = await startCli([
        ...base,
        '--service-account-signing-key-file',
        newKey,
        '--service-account-key-file',
        join(dir, 'sa.key'),
      ]);
      try {
        assert.equal(await works(dir, old), true, 'the token of the old key was refused');
        const fresh = await issue(dir, cli, 'rotating');
        assert.equal(decodeProtectedHeader(fresh).alg, 'ES256');
        assert.notEqual(decodeProtectedHeader(fresh).kid, decodeProtectedHeader(old).kid);
        assert.equal(await works(dir, fresh), true);
        const keys = await callJwks(dir, cli.url);
        assert.deepEqual(
          keys.map((k) => [k.kid, k.alg]).sort(),
          [
            [decodeProtectedHeader(fresh).kid, 'ES256'],
            [decodeProtectedHeader(old).kid, 'RS256'],
          ].sort(),
        );
      } finally {
        await cli.stop();
      }
      // Without the old key listed, its tokens no longer verify.
      cli = await startCli([...base, '--service-account-signing-key-file', newKey]);
      try {
        assert.equal(await works(dir, old), false, 'a token of a key no longer listed was accepted');
      } finally {
        await cli.stop();
      }
    });
  });

  it('writes --service-account-issuer and --api-audiences into tokens and discovery', async () => {
    await withDataDir(async (dir) => {
      const cli = await startCli([
        ...['apiserver', '--data-dir', dir, '--port', '0'],
        ...['--service-account-issuer', 'https://issuer.example.test/cluster-1'],
        ...['--service-account-issuer', 'https://kubernetes.default.svc.cluster.local'],
        ...['--api-audiences', 'api.example.test,other.example.test'],
        ...['--service-account-max-token-expiration', '2h'],
      ]);
      try {
        const token = await issue(dir, cli, 'custom');
        const claims = decodeJwt(token);
        assert.equal(claims.iss, 'https://issuer.example.test/cluster-1');
        assert.deepEqual(claims.aud, ['api.example.test', 'other.example.test']);
        assert.equal(await works(dir, token), true);
        const vault = await issue(dir, cli, 'custom', '--audience', 'vault');
        assert.equal(await works(dir, vault), false, 'a token for another audience was accepted');
        // Longer than --service-account-max-token-expiration: shortened, with kube-apiserver's warning.
        const long = await kubectlOn(dir).run('create', 'token', 'custom', '--duration', '10h');
        assert.equal(long.code, 0, long.stderr);
        assert.match(long.stderr, /Warning: requested expiration of 36000 seconds shortened to 7200 seconds/);
        const longClaims = decodeJwt(long.stdout.trim());
        assert.equal(longClaims.exp! - longClaims.iat!, 7200);
        const config = await callDiscovery(dir, cli.url);
        assert.equal(config.issuer, 'https://issuer.example.test/cluster-1');
        assert.equal(config.jwks_uri, `${cli.url}/openid/v1/jwks`);
      } finally {
        await cli.stop();
      }
    });
  });

  it('refuses key files that are not keys, naming the flag', async () => {
    await withDataDir(async (dir) => {
      await writeFile(join(dir, 'not-a-key.pem'), 'hello\n');
      const cases: [string[], RegExp][] = [
        [
          ['--service-account-signing-key-file', join(dir, 'not-a-key.pem')],
          /--service-account-signing-key-file: .*not-a-key\.pem: not a PEM private key/,
        ],
        [
          ['--service-account-key-file', join(dir, 'not-a-key.pem')],
          /--service-account-key-file: .*not-a-key\.pem holds no PEM key/,
        ],
        [['--service-account-signing-key-file', join(dir, 'missing.pem')], /ENOENT/],
        [['--service-account-issuer', ''], /--service-account-issuer must not be empty/],
        [['--service-account-jwks-uri', 'http://x'], /--service-account-jwks-uri must be an https URL/],
        [
          ['--service-account-max-token-expiration', '30m'],
          /--service-account-max-token-expiration must be 0 \(no limit\) or at least 3607s/,
        ],
        [['--service-account-max-token-expiration', 'soon'], /--service-account-max-token-expiration: /],
      ];
      for (const [flags, message] of cases) {
        const r = await runCli(['apiserver', '--data-dir', join(dir, 'data'), '--port', '0', ...flags]);
        assert.notEqual(r.code, 0, flags.join(' '));
        assert.match(r.stderr, message);
      }
    });
  });
});

/** The discovery documents, read with the data dir's CA (callApi sends the admin token too; they need none). */
async function callDiscovery(dir: string, url: string): Promise<Record<string, unknown>> {
  const r = await callApi(dir, url, 'GET', '/.well-known/openid-configuration');
  assert.equal(r.status, 200);
  return r.json;
}

async function callJwks(dir: string, url: string): Promise<{ kid: string; alg: string }[]> {
  const r = await callApi(dir, url, 'GET', '/openid/v1/jwks');
  assert.equal(r.status, 200);
  return (r.json as { keys: { kid: string; alg: string }[] }).keys;
}
