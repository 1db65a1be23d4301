import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiServer } from '../http/server.ts';
import { SqliteStorage } from '../storage/sqlite.ts';
import { createTestCa, type TestCa, type TestKeyPair } from '@certkit/testenv/pki/auth-certs';
import { Authenticator } from './authentication.ts';
import { servingTlsOptions } from './tls-policy.ts';
import type { UserInfo } from './user.ts';

/**
 * Authentication over real TLS connections: client certificates verified against the client CA (CN the user,
 * O the groups), tokens of a token file, the generated admin token; and the API server refusing the rest.
 */

let serverCa: TestCa;
let clientCa: TestCa;
let otherCa: TestCa;
let serving: TestKeyPair;
let alice: TestKeyPair;
let serverOnly: TestKeyPair;
let noUsages: TestKeyPair;
let stranger: TestKeyPair;
const tokens = new Map<string, UserInfo>([
  ['bob-token', { name: 'bob', uid: '1001', groups: ['team-a', 'team-b'] }],
]);

before(async () => {
  serverCa = await createTestCa('server-ca');
  clientCa = await createTestCa('client-ca');
  otherCa = await createTestCa('other-ca');
  serving = await serverCa.issue({
    commonName: 'apiserver',
    ipAddresses: ['127.0.0.1'],
    usages: ['serverAuth'],
  });
  alice = await clientCa.issue({
    commonName: 'alice',
    organizations: ['dev', 'ops'],
    usages: ['clientAuth'],
  });
  serverOnly = await clientCa.issue({ commonName: 'mallory', usages: ['serverAuth'] });
  noUsages = await clientCa.issue({ commonName: 'carol' });
  stranger = await otherCa.issue({
    commonName: 'alice',
    organizations: ['system:masters'],
    usages: ['clientAuth'],
  });
});

interface Call {
  status: number;
  body: string;
}

function call(
  url: string,
  options: { token?: string; client?: TestKeyPair; path?: string; body?: unknown } = {},
): Promise<Call> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${options.path ?? '/api/v1/namespaces'}`,
      {
        ca: serverCa.certPem,
        agent: false,
        ...(options.client ? { cert: options.client.certPem, key: options.client.keyPem } : {}),
        method: options.body === undefined ? 'GET' : 'POST',
        headers: {
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
          ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

describe('Authenticator', () => {
  // A TLS server that answers with whom the authenticator says each request is from.
  let server: Server;
  let url: string;
  before(async () => {
    const authenticator = new Authenticator({ adminToken: 'admin-token', tokens, clientCertificates: true });
    server = createServer(
      servingTlsOptions({ cert: serving.certPem, key: serving.keyPem, clientCa: clientCa.certPem }),
      (req, res) => res.end(JSON.stringify(authenticator.authenticate(req) ?? null)),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const whoami = async (options: Parameters<typeof call>[1]) => JSON.parse((await call(url, options)).body);

  it('takes the user from the CN and the groups from the O of a client certificate the CA issued', async () => {
    assert.deepEqual(await whoami({ client: alice }), {
      name: 'alice',
      groups: ['dev', 'ops', 'system:authenticated'],
    });
  });
  it('takes the user of a token-file token, and the admin user of the generated token', async () => {
    assert.deepEqual(await whoami({ token: 'bob-token' }), {
      name: 'bob',
      uid: '1001',
      groups: ['team-a', 'team-b', 'system:authenticated'],
    });
    assert.deepEqual(await whoami({ token: 'admin-token' }), {
      name: 'certkit-admin',
      groups: ['system:masters', 'system:authenticated'],
    });
  });
  it('accepts a client certificate without extended key usages, as Go does', async () => {
    assert.equal((await whoami({ client: noUsages })).name, 'carol');
  });
  it('authenticates nobody from a certificate of another CA or one not for client auth', async () => {
    assert.equal(await whoami({ client: stranger }), null);
    assert.equal(await whoami({ client: serverOnly }), null);
    assert.equal(await whoami({ token: 'wrong' }), null);
    assert.equal(await whoami({}), null);
  });
  it('falls back to the token when the certificate authenticates nobody, as kube’s union of authenticators', async () => {
    assert.equal((await whoami({ client: stranger, token: 'bob-token' })).name, 'bob');
  });
});

describe('the API server with a token file and a client CA', () => {
  let dir: string;
  let storage: SqliteStorage;
  let api: ApiServer;
  const logged: Record<string, unknown>[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-authn-'));
    storage = SqliteStorage.open(join(dir, 'state.db'));
    api = await ApiServer.start({
      storage,
      port: 0,
      tls: { cert: serving.certPem, key: serving.keyPem, clientCa: clientCa.certPem },
      token: 'admin-token',
      tokens,
      log: (entry) => logged.push(entry),
    });
    // RBAC is on: alice (group dev, by her certificate) and bob (team-a) may list namespaces by these bindings.
    const bind = await call(api.url, {
      token: 'admin-token',
      path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      body: {
        metadata: { name: 'namespace-viewers' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [
          { kind: 'Group', name: 'dev' },
          { kind: 'Group', name: 'team-a' },
        ],
      },
    });
    assert.equal(bind.status, 201, bind.body);
    for (let i = 0; (await call(api.url, { token: 'bob-token' })).status !== 200; i++) {
      assert.ok(i < 200, 'the binding never took effect');
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 20));
  });
  after(async () => {
    await api.close();
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves every configured credential and records who sent the request', async () => {
    for (const [options, user] of [
      [{ client: alice }, 'alice'],
      [{ token: 'bob-token' }, 'bob'],
      [{ token: 'admin-token' }, 'certkit-admin'],
    ] as const) {
      logged.length = 0;
      const res = await call(api.url, options);
      assert.equal(res.status, 200, user);
      assert.equal(logged.find((e) => e.path === '/api/v1/namespaces')?.user, user);
    }
  });
  it('answers 401 to a wrong token, a foreign certificate and no credentials', async () => {
    for (const options of [{ token: 'wrong' }, { client: stranger }, { client: serverOnly }, {}]) {
      const res = await call(api.url, options);
      assert.equal(res.status, 401, JSON.stringify(Object.keys(options)));
      assert.equal(JSON.parse(res.body).reason, 'Unauthorized');
    }
    assert.equal((await call(api.url, { path: '/healthz' })).status, 200);
  });
});
