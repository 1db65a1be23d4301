import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { kubectlFor, kubectlSkip, type Kubectl } from '@certkit/testenv/kubectl/kubectl';
import { pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { writeKubeconfig } from '../kubeconfig.ts';
import { ensureSigningKey, type SigningKey } from './keys.ts';

/**
 * ServiceAccount tokens end to end on a real server: issued by `kubectl create token` and the Python client
 * (the TokenRequest API), used by kubectl and the Python client, refused when expired, for another audience,
 * after their ServiceAccount or bound Secret was deleted (and recreated), or malformed; the issuer discovery
 * documents served to anonymous clients and verifying the tokens; anonymous API requests refused.
 */

const ISSUER = 'https://issuer.certkit.test';
let t: TestServer;
let keyDir: string;
let signingKey: SigningKey;
let kubectl: Kubectl;
/** Who the server says sent each request: its debug log's `user`, by path. */
const requestUsers: { path: string; user: unknown; code: unknown }[] = [];

before(async () => {
  keyDir = await mkdtemp(join(tmpdir(), 'certkit-sa-keys-'));
  signingKey = await ensureSigningKey(keyDir);
  t = await startTestServer({
    serviceAccountTokens: { issuers: [ISSUER, 'https://old-issuer.certkit.test'], signingKey },
    log: (e) => {
      if (e.level === 'debug') requestUsers.push({ path: String(e.path), user: e.user, code: e.code });
      if (e.level === 'error') console.error('apiserver:', e);
    },
  });
  kubectl = kubectlFor({ ...process.env, KUBECONFIG: t.kubeconfigPath }, t.dataDir);
  await letServiceAccountsView();
});

/**
 * RBAC is on: the tokens' users may do only what their bindings grant. Every ServiceAccount gets `view`, as an
 * administrator would bind it, and the test waits until the authorizer has seen the binding.
 */
async function letServiceAccountsView(): Promise<void> {
  const res = await t.fetch('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'serviceaccounts-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:serviceaccounts' }],
    },
  });
  assert.equal(res.status, 201, res.text);
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: 'system:serviceaccount:default:any',
      groups: ['system:serviceaccounts'],
      resourceAttributes: { namespace: 'default', verb: 'list', resource: 'serviceaccounts' },
    },
  };
  for (let i = 0; i < 200; i++) {
    const r = await t.fetch('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: review });
    if (r.json?.status?.allowed === true) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail('the binding of view to system:serviceaccounts never took effect');
}

after(async () => {
  await t?.close();
  await rm(keyDir, { recursive: true, force: true });
});

/** A request with `token` as the bearer token (or none). */
function withToken(token: string | undefined, method: string, path: string, body?: unknown) {
  return t.fetch(method, path, {
    anonymous: true,
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    body,
  });
}

async function createServiceAccount(namespace: string, name: string): Promise<string> {
  const res = await t.fetch('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  assert.equal(res.status, 201, res.text);
  return res.json.metadata.uid as string;
}

async function tokenFor(namespace: string, name: string, spec: Record<string, unknown> = {}) {
  return t.fetch('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
  });
}

async function deleteAndWait(path: string): Promise<void> {
  const res = await t.fetch('DELETE', path);
  assert.equal(res.status, 200, res.text);
  for (let i = 0; i < 100 && (await t.fetch('GET', path)).status !== 404; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('TokenRequest with kubectl create token', { skip: kubectlSkip }, () => {
  it('issues a token that authenticates as the ServiceAccount, with kube-apiserver claims', async () => {
    const uid = await createServiceAccount('default', 'robot');
    const token = (await kubectl.ok('create', 'token', 'robot')).trim();
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.kid, signingKey.kid);
    const claims = decodeJwt(token);
    assert.equal(claims.iss, ISSUER);
    assert.equal(claims.sub, 'system:serviceaccount:default:robot');
    assert.deepEqual(claims.aud, [ISSUER, 'https://old-issuer.certkit.test']);
    assert.equal(claims.exp! - claims.iat!, 3600);
    assert.equal(claims.nbf, claims.iat);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
    assert.deepEqual(claims['kubernetes.io'], {
      namespace: 'default',
      serviceaccount: { name: 'robot', uid },
    });

    const kubeconfig = join(t.dataDir, 'robot.kubeconfig');
    await writeKubeconfig(kubeconfig, { server: t.url, caCertPem: t.caCertPem, token });
    const asRobot = kubectlFor({ ...process.env, KUBECONFIG: kubeconfig }, t.dataDir);
    const out = await asRobot.ok('get', 'serviceaccounts', '-n', 'default', '-o', 'name');
    assert.match(out, /serviceaccount\/robot/);
    const seen = requestUsers.filter((r) => r.path.startsWith('/api/v1/namespaces/default/serviceaccounts?'));
    assert.equal(seen.at(-1)?.user, 'system:serviceaccount:default:robot');
    assert.equal(seen.at(-1)?.code, 200);
  });

  it('honours --duration and --audience, and refuses a token for another audience', async () => {
    await createServiceAccount('default', 'aud-robot');
    const token = (
      await kubectl.ok('create', 'token', 'aud-robot', '--duration', '2h', '--audience', 'vault')
    ).trim();
    const claims = decodeJwt(token);
    assert.deepEqual(claims.aud, ['vault']);
    assert.equal(claims.exp! - claims.iat!, 7200);
    // Valid for vault, not for this API server: its audiences are the issuers.
    const res = await withToken(token, 'GET', '/api/v1/namespaces');
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.reason, 'Unauthorized');
  });

  it('refuses a duration under ten minutes with kube-apiserver message', async () => {
    await createServiceAccount('default', 'short');
    const r = await kubectl.run('create', 'token', 'short', '--duration', '5m');
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /TokenRequest\.authentication\.k8s\.io "" is invalid: spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/,
    );
  });

  it('answers 404 for a ServiceAccount that does not exist', async () => {
    const r = await kubectl.run('create', 'token', 'nobody');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /serviceaccounts "nobody" not found/);
  });

  it('binds a token to a Secret: it stops working when the Secret is deleted', async () => {
    await createServiceAccount('default', 'bound');
    const secret = await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anchor' } },
    });
    assert.equal(secret.status, 201);
    const token = (
      await kubectl.ok(
        'create',
        'token',
        'bound',
        '--bound-object-kind',
        'Secret',
        '--bound-object-name',
        'anchor',
      )
    ).trim();
    assert.deepEqual(decodeJwt(token)['kubernetes.io'], {
      namespace: 'default',
      serviceaccount: { name: 'bound', uid: (decodeJwt(token)['kubernetes.io'] as any).serviceaccount.uid },
      secret: { name: 'anchor', uid: secret.json.metadata.uid },
    });
    // ConfigMaps: what the test's `view` binding lets a ServiceAccount read (Secrets it does not).
    assert.equal((await withToken(token, 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    await deleteAndWait('/api/v1/namespaces/default/secrets/anchor');
    assert.equal((await withToken(token, 'GET', '/api/v1/namespaces/default/configmaps')).status, 401);
  });
});

describe('TokenRequest API', () => {
  it('answers a TokenRequest with the defaulted spec and the token status', async () => {
    await createServiceAccount('default', 'api-robot');
    const res = await tokenFor('default', 'api-robot', { expirationSeconds: 600 });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.kind, 'TokenRequest');
    assert.equal(res.json.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(res.json.metadata.name, 'api-robot');
    assert.equal(res.json.metadata.namespace, 'default');
    assert.deepEqual(res.json.spec.audiences, [ISSUER, 'https://old-issuer.certkit.test']);
    assert.equal(res.json.spec.expirationSeconds, 600);
    const claims = decodeJwt(res.json.status.token);
    assert.equal(Date.parse(res.json.status.expirationTimestamp), claims.exp! * 1000);
    // Request info names it as RBAC will authorise it: verb create on serviceaccounts/token.
    const metrics = (await t.fetch('GET', '/metrics')).text;
    const created = metrics
      .split('\n')
      .filter((l) => l.startsWith('apiserver_request_total{') && l.includes('code="201"'))
      .filter((l) => l.includes('verb="create"') && l.includes('resource="serviceaccounts/token"'));
    assert.equal(created.length, 1, metrics);
  });

  it('refuses what kube-apiserver refuses, with its status codes', async () => {
    await createServiceAccount('default', 'strict');
    const long = await tokenFor('default', 'strict', { expirationSeconds: 2 ** 32 + 1 });
    assert.equal(long.status, 422);
    assert.match(
      long.json.message,
      /spec\.expirationSeconds: .*may not specify a duration larger than 2\^32 seconds/,
    );
    const typed = await tokenFor('default', 'strict', { expirationSeconds: 'long' });
    assert.equal(typed.status, 400);
    assert.match(typed.json.message, /TokenRequest in version "v1" cannot be handled as a TokenRequest/);
    const kind = await tokenFor('default', 'strict', {
      boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' },
    });
    assert.equal(kind.status, 400);
    assert.equal(kind.json.message, 'cannot bind token to object of type /v1, Kind=ConfigMap');
    const missing = await tokenFor('default', 'strict', {
      boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'absent' },
    });
    assert.equal(missing.status, 404);
    await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uid-check' } },
    });
    const conflict = await tokenFor('default', 'strict', {
      boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'uid-check', uid: 'not-its-uid' },
    });
    assert.equal(conflict.status, 409);
    assert.match(
      conflict.json.message,
      /the UID in the bound object reference \(not-its-uid\) does not match/,
    );
    const otherName = await t.fetch('POST', '/api/v1/namespaces/default/serviceaccounts/strict/token', {
      body: { kind: 'TokenRequest', metadata: { name: 'someone-else' }, spec: {} },
    });
    assert.equal(otherName.status, 422);
    assert.match(
      otherName.json.message,
      /metadata\.name: Invalid value: "someone-else": must match the service account name/,
    );
    const get = await t.fetch('GET', '/api/v1/namespaces/default/serviceaccounts/strict/token');
    assert.equal(get.status, 405);
    const other = await t.fetch('POST', '/api/v1/namespaces/default/secrets/uid-check/token', {
      body: { spec: {} },
    });
    assert.equal(other.status, 404);
  });

  it('issues nothing for an anonymous client', async () => {
    const res = await withToken(
      undefined,
      'POST',
      '/api/v1/namespaces/default/serviceaccounts/strict/token',
      {
        spec: {},
      },
    );
    assert.equal(res.status, 401);
  });
});

describe('ServiceAccount token authentication', () => {
  it('refuses the old token once the ServiceAccount is deleted and recreated; a new token works', async () => {
    await createServiceAccount('default', 'phoenix');
    const old = (await tokenFor('default', 'phoenix')).json.status.token as string;
    assert.equal((await withToken(old, 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    await deleteAndWait('/api/v1/namespaces/default/serviceaccounts/phoenix');
    // Refused at once, although the token was verified (and cached) a moment ago.
    assert.equal((await withToken(old, 'GET', '/api/v1/namespaces/default/configmaps')).status, 401);
    await createServiceAccount('default', 'phoenix');
    assert.equal((await withToken(old, 'GET', '/api/v1/namespaces/default/configmaps')).status, 401);
    const fresh = (await tokenFor('default', 'phoenix')).json.status.token as string;
    assert.equal((await withToken(fresh, 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  });

  it('refuses an expired token, and accepts one expired within the minute of leeway', async () => {
    const uid = await createServiceAccount('default', 'expired');
    const now = Math.floor(Date.now() / 1000);
    const sign = (exp: number) =>
      new SignJWT({
        'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'expired', uid } },
      })
        .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid })
        .setIssuer(ISSUER)
        .setSubject('system:serviceaccount:default:expired')
        .setAudience([ISSUER])
        .setIssuedAt(now - 4000)
        .setNotBefore(now - 4000)
        .setExpirationTime(exp)
        .sign(signingKey.privateKey);
    const expired = await sign(now - 120);
    const res = await withToken(expired, 'GET', '/api/v1/namespaces');
    assert.equal(res.status, 401, res.text);
    assert.equal((await withToken(await sign(now - 10), 'GET', '/api/v1/namespaces')).status, 200);
  });

  it('accepts tokens of every configured issuer, and no other', async () => {
    const uid = await createServiceAccount('default', 'issuers');
    const now = Math.floor(Date.now() / 1000);
    const sign = (issuer: string) =>
      new SignJWT({ 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'issuers', uid } } })
        .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid })
        .setIssuer(issuer)
        .setSubject('system:serviceaccount:default:issuers')
        .setAudience(ISSUER)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(signingKey.privateKey);
    assert.equal((await withToken(await sign('https://old-issuer.certkit.test'), 'GET', '/api')).status, 200);
    assert.equal((await withToken(await sign('https://elsewhere.test'), 'GET', '/api')).status, 401);
  });

  it('answers malformed, forged and mismatched JWTs with 401, never a 500', async () => {
    const uid = await createServiceAccount('default', 'target');
    const good = (await tokenFor('default', 'target')).json.status.token as string;
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...payload, sub: 'system:serviceaccount:kube-system:admin' }),
    ).toString('base64url');
    const wrongSubject = await new SignJWT({
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'target', uid } },
    })
      .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid })
      .setIssuer(ISSUER)
      .setSubject('system:serviceaccount:default:someone-else')
      .setAudience(ISSUER)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(signingKey.privateKey);
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
    const noneWithSig = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.${s}`;
    const hs256 = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('a shared secret that is long enough'));
    const malformed = [
      'a.b.c',
      'not-a-jwt',
      `${h}.${p}`,
      `${h}.${p}.${s}.extra`,
      `${h}.!!!.${s}`,
      `${h}.${Buffer.from('[1,2]').toString('base64url')}.${s}`,
      `${h}.${forgedPayload}.${s}`,
      `${h}.${p}.${s.slice(0, -4)}AAAA`,
      `${Buffer.from('not json').toString('base64url')}.${p}.${s}`,
      unsigned,
      noneWithSig,
      hs256,
      wrongSubject,
      good.replace(/\./g, ' '),
    ];
    for (const token of malformed) {
      const res = await withToken(token, 'GET', '/api/v1/namespaces');
      assert.equal(res.status, 401, `${token}: ${res.text}`);
      assert.equal(res.json.kind, 'Status');
    }
    assert.equal((await withToken(good, 'GET', '/api/v1/namespaces')).status, 200);
  });

  it('refuses anonymous API requests; health and discovery stay open', async () => {
    assert.equal((await withToken(undefined, 'GET', '/api/v1/namespaces')).status, 401);
    assert.equal((await withToken(undefined, 'GET', '/apis')).status, 401);
    for (const path of ['/healthz', '/livez', '/readyz', '/readyz/ping']) {
      assert.equal((await withToken(undefined, 'GET', path)).status, 200, path);
    }
  });
});

describe('Issuer discovery', () => {
  it('serves an OpenID configuration and a key set that verify the issued tokens', async () => {
    const config = await withToken(undefined, 'GET', '/.well-known/openid-configuration');
    assert.equal(config.status, 200);
    assert.equal(config.headers['content-type'], 'application/json');
    assert.equal(config.headers['cache-control'], 'public, max-age=3600');
    assert.deepEqual(config.json, {
      issuer: ISSUER,
      jwks_uri: `${t.url}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
    const jwks = await withToken(undefined, 'GET', '/openid/v1/jwks');
    assert.equal(jwks.status, 200);
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    assert.equal(jwks.json.keys.length, 1);
    const [key] = jwks.json.keys;
    assert.equal(key.kid, signingKey.kid);
    assert.equal(key.use, 'sig');
    assert.equal(key.alg, 'RS256');
    assert.equal(key.d, undefined, 'no private part');
    assert.deepEqual({ kty: key.kty, n: key.n, e: key.e }, signingKey.key.export({ format: 'jwk' }));

    // A relying party knowing only these documents verifies a token of the TokenRequest API.
    await createServiceAccount('default', 'federated');
    const token = (await tokenFor('default', 'federated', { audiences: ['sts.example.com'] })).json.status
      .token;
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks.json), {
      issuer: config.json.issuer,
      audience: 'sts.example.com',
    });
    assert.equal(payload.sub, 'system:serviceaccount:default:federated');
    const post = await withToken(undefined, 'POST', '/openid/v1/jwks', {});
    assert.equal(post.status, 405);
  });
});

describe('python3-kubernetes', { skip: pythonClientSkip }, () => {
  it('requests a token with create_namespaced_service_account_token and uses it', async () => {
    await createServiceAccount('default', 'snake');
    const python = pythonClientFor(t.kubeconfigPath);
    const issued = await python.run(
      `
body = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=ARGS['audiences'], expiration_seconds=1200))
r = core.create_namespaced_service_account_token('snake', 'default', body)
emit({'token': r.status.token, 'expires': r.status.expiration_timestamp.isoformat(), 'seconds': r.spec.expiration_seconds})
`,
      { audiences: [ISSUER] },
    );
    assert.equal(issued.seconds, 1200);
    assert.equal(decodeJwt(issued.token).sub, 'system:serviceaccount:default:snake');
    const kubeconfig = join(t.dataDir, 'snake.kubeconfig');
    await writeKubeconfig(kubeconfig, { server: t.url, caCertPem: t.caCertPem, token: issued.token });
    const names = await pythonClientFor(kubeconfig).run(`
emit([sa.metadata.name for sa in core.list_namespaced_service_account('default').items])
`);
    assert.ok(names.includes('snake'));
  });
});
