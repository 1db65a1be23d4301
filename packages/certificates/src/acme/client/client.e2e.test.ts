/**
 * The ACME client against real Pebble (Debian's 2.4.0): accounts, EAB, the order flow to a certificate chain,
 * preferredChain, Pebble's random badNonce rejections (left at their default 5 %), typed problems, TLS
 * trust; and, against a small local server since Pebble has no rate limits, 429/503 with Retry-After.
 */

import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/runtime';
import { buildCertificateRequest, generatePrivateKey } from '../../pki/index.ts';
import { decodePemBlocks } from '../../pki/pem.ts';
import { startPebble, pebbleSkip, type Pebble } from '@certkit/testenv/pebble/pebble';
import {
  AcmeClient,
  AcmeErrorType,
  AcmeProblemError,
  AcmeTransportError,
  AcmeUnsupportedProfileError,
  decodeEabHmacKey,
  loadAccountKey,
  registerAcmeClientMetrics,
  topIssuerCommonName,
  type AcmeClientOptions,
} from './index.ts';

const skip = pebbleSkip();

function ecKey() {
  return loadAccountKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
}

function certificatesOf(pem: string): X509Certificate[] {
  return decodePemBlocks(pem)
    .filter((b) => b.type === 'CERTIFICATE')
    .map((b) => new X509Certificate(b.der));
}

/** Whether a chain (leaf first) is signed link by link and its top is signed by `rootPem`. */
function chainsTo(pem: string, rootPem: string): boolean {
  const certs = [...certificatesOf(pem), new X509Certificate(rootPem)];
  return certs.slice(0, -1).every((cert, i) => cert.verify(certs[i + 1].publicKey));
}

/** An order for `names` taken through authorization (PEBBLE_VA_ALWAYS_VALID) to `ready`. */
async function readyOrder(client: AcmeClient, names: string[]) {
  const order = await client.newOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) });
  assert.equal(order.status, 'pending');
  assert.equal(order.authorizations.length, names.length);
  for (const url of order.authorizations) {
    const authz = await client.getAuthorization(url);
    if (authz.status === 'valid') continue;
    const challenge = authz.challenges.find((c) => c.type === 'http-01');
    assert.ok(challenge, 'Pebble offers http-01');
    await client.acceptChallenge(challenge.url);
    assert.equal((await client.waitForAuthorization(url)).status, 'valid');
  }
  const ready = await client.waitForOrder(order.url);
  assert.equal(ready.status, 'ready');
  return ready;
}

describe('ACME client against Pebble', { skip }, () => {
  let pebble: Pebble;
  let registry: MetricsRegistry;
  const clients: AcmeClient[] = [];

  before(async () => {
    pebble = await startPebble({ alwaysValid: true, alternateRoots: 1 });
    registry = new MetricsRegistry();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await pebble?.stop();
  });

  async function client(extra: Partial<AcmeClientOptions> = {}): Promise<AcmeClient> {
    const c = new AcmeClient({
      directoryUrl: pebble.directoryUrl,
      caBundle: pebble.caBundle,
      accountKey: extra.accountKey ?? (await ecKey()),
      metrics: registerAcmeClientMetrics(registry),
      ...extra,
    });
    clients.push(c);
    return c;
  }

  it('registers an account with an ES256 key, then finds the same account again', async () => {
    const c = await client();
    const { account, created } = await c.registerAccount({
      contact: ['mailto:admin@example.test'],
      termsOfServiceAgreed: true,
    });
    assert.equal(created, true);
    assert.equal(account.status, 'valid');
    assert.deepEqual(account.contact, ['mailto:admin@example.test']);
    assert.match(account.url, /^https:\/\/127\.0\.0\.1:\d+\/my-account\//);
    assert.equal(c.accountUrl, account.url);

    // The same key again, from a client that lost the URL: 200 and the same account, nothing created.
    const again = await client({ accountKey: c.accountKey });
    const found = await again.registerAccount({ termsOfServiceAgreed: true });
    assert.equal(found.created, false);
    assert.equal(found.account.url, account.url);
    const existing = await (
      await client({ accountKey: c.accountKey })
    ).registerAccount({
      onlyReturnExisting: true,
    });
    assert.equal(existing.account.url, account.url);
  });

  it('registers with an RS256 (RSA 2048) key, as cert-manager generates them', async () => {
    const key = await loadAccountKey(await generatePrivateKey({ algorithm: 'RSA', size: 2048 }));
    assert.equal(key.algorithm, 'RS256');
    const { created, account } = await (
      await client({ accountKey: key })
    ).registerAccount({
      termsOfServiceAgreed: true,
    });
    assert.equal(created, true);
    assert.equal(account.status, 'valid');
  });

  it('onlyReturnExisting for an unknown key is a typed accountDoesNotExist problem', async () => {
    const c = await client();
    const error = await c.registerAccount({ onlyReturnExisting: true }).then(
      () => assert.fail('registered'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof AcmeProblemError, String(error));
    assert.equal(error.type, AcmeErrorType.accountDoesNotExist);
    assert.equal(error.status, 400);
    assert.equal(error.isClientError, true);
    assert.equal(c.accountUrl, undefined);
  });

  it('updates the account contact, and clears it', async () => {
    const c = await client();
    await c.registerAccount({ contact: ['mailto:old@example.test'], termsOfServiceAgreed: true });
    const updated = await c.updateAccount({ contact: ['mailto:new@example.test'] });
    assert.deepEqual(updated.contact, ['mailto:new@example.test']);
    assert.deepEqual((await c.getAccount()).contact, ['mailto:new@example.test']);
    await c.updateAccount({ contact: [] });
    assert.deepEqual((await c.getAccount()).contact ?? [], []);
  });

  it('takes an order through authorization and finalization to a chain that ends at the Pebble root', async () => {
    const c = await client();
    await c.registerAccount({ termsOfServiceAgreed: true });
    const names = ['www.example.test', 'api.example.test'];
    const order = await readyOrder(c, names);
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const csr = await buildCertificateRequest({ dnsNames: names }, key);
    const finalized = await c.finalizeOrder(order.finalize, decodePemBlocks(csr)[0].der, order.url);
    assert.ok(['processing', 'valid'].includes(finalized.status), finalized.status);
    const valid = await c.waitForOrder(order.url);
    assert.equal(valid.status, 'valid');
    assert.ok(valid.certificate);

    const pem = await c.certificateChain(valid.certificate);
    const [leaf, intermediate] = certificatesOf(pem);
    assert.ok(intermediate, 'the chain has the intermediate');
    assert.equal(leaf.checkHost('www.example.test'), 'www.example.test');
    assert.equal(leaf.checkHost('api.example.test'), 'api.example.test');
    assert.ok(leaf.publicKey.equals(createPublicKey(key)), 'the leaf carries the CSR key');
    const [root] = await pebble.roots();
    assert.ok(chainsTo(pem, root), 'the default chain ends at root 0');
  });

  it('sends notAfter only when asked, and Pebble honours it', async () => {
    const c = await client();
    await c.registerAccount({ termsOfServiceAgreed: true });
    const notAfter = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
    const order = await c.newOrder({ identifiers: [{ type: 'dns', value: 'short.example.test' }], notAfter });
    assert.equal(Date.parse(order.notAfter ?? ''), notAfter.getTime());
    const plain = await c.newOrder({ identifiers: [{ type: 'dns', value: 'plain.example.test' }] });
    assert.equal(plain.notAfter, undefined);
  });

  it('picks the alternate chain whose top issuer CN is the preferredChain, else the default', async () => {
    const c = await client();
    await c.registerAccount({ termsOfServiceAgreed: true });
    const order = await readyOrder(c, ['chain.example.test']);
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const csr = await buildCertificateRequest({ dnsNames: ['chain.example.test'] }, key);
    await c.finalizeOrder(order.finalize, decodePemBlocks(csr)[0].der);
    const valid = await c.waitForOrder(order.url);
    assert.ok(valid.certificate);

    const [root0, root1] = await pebble.roots();
    const cn = (pem: string) => new X509Certificate(pem).subject.replace(/^.*CN=/s, '').split('\n')[0];
    const downloaded = await c.downloadCertificate(valid.certificate);
    assert.equal(downloaded.alternates.length, 1, 'Pebble links one alternate chain');

    const alternate = await c.certificateChain(valid.certificate, cn(root1));
    assert.equal(topIssuerCommonName(alternate), cn(root1));
    assert.ok(chainsTo(alternate, root1), 'the preferred chain ends at the alternate root');
    assert.ok(!chainsTo(alternate, root0));

    const preferredDefault = await c.certificateChain(valid.certificate, cn(root0));
    assert.ok(chainsTo(preferredDefault, root0));
    const noMatch = await c.certificateChain(valid.certificate, 'No Such Root');
    assert.equal(noMatch, downloaded.pem, 'an unmatched preference keeps the default chain');
  });

  it('never surfaces badNonce: 250 signed requests at Pebble default 5 % nonce rejection', async () => {
    const c = await client();
    await c.registerAccount({ termsOfServiceAgreed: true });
    for (let i = 0; i < 250; i++) assert.equal((await c.getAccount()).status, 'valid');
    // The rejections did happen (P(none in 250) ≈ 3e-6): Pebble answered 400 badNonce and the client resigned.
    const text = registry.render();
    const rejected = [
      ...text.matchAll(
        /certmanager_http_acme_client_request_count\{[^}]*action="get_registration"[^}]*status="400"\} (\d+)/g,
      ),
    ];
    assert.ok(rejected.length === 1 && Number(rejected[0][1]) > 0, 'some nonces were rejected and retried');
  });

  it('gives typed problems for a CSR that does not match the order and for one that is not a CSR', async () => {
    const c = await client();
    await c.registerAccount({ termsOfServiceAgreed: true });
    const order = await readyOrder(c, ['csr.example.test']);
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const wrongNames = await buildCertificateRequest({ dnsNames: ['other.example.test'] }, key);
    const error = await c.finalizeOrder(order.finalize, decodePemBlocks(wrongNames)[0].der).then(
      () => assert.fail('finalized'),
      (e: unknown) => e,
    );
    // Pebble (like Boulder) refuses names missing from the CSR as unauthorized, with the name in the detail.
    assert.ok(error instanceof AcmeProblemError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.type, AcmeErrorType.unauthorized);
    assert.equal(error.isClientError, true);
    assert.equal(error.detail, 'CSR is missing Order domain "csr.example.test"');
    assert.equal(error.message, `403 ${AcmeErrorType.unauthorized}: ${error.detail}`);

    const garbage = await c.finalizeOrder(order.finalize, Buffer.from('not a CSR')).catch((e: unknown) => e);
    assert.ok(garbage instanceof AcmeProblemError, String(garbage));
    assert.equal(garbage.status, 400);
    assert.equal(garbage.type, AcmeErrorType.malformed);
    assert.match(garbage.detail, /CSR/);
  });

  it('refuses a profile the server does not offer before sending the order', async () => {
    const c = await client();
    await c.registerAccount({ termsOfServiceAgreed: true });
    await assert.rejects(
      c.newOrder({ identifiers: [{ type: 'dns', value: 'p.example.test' }], profile: 'shortlived' }),
      (e: unknown) => e instanceof AcmeUnsupportedProfileError && /offers no profiles/.test(e.message),
    );
  });

  it('labels every round trip with scheme, host, action, method and status', async () => {
    // scrape(), as /metrics serves it: the duration summary is a collector of the registry.
    const text = await registry.scrape();
    const host = new URL(pebble.directoryUrl).host;
    for (const action of [
      'discover',
      'register_account',
      'authorize_order',
      'create_order_cert',
      'fetch_cert',
    ]) {
      assert.match(
        text,
        new RegExp(
          `certmanager_http_acme_client_request_count\\{scheme="https",host="${host.replace(/\./g, '\\.')}",action="${action}",method="(GET|POST)",status="2\\d\\d"\\} \\d+`,
        ),
        action,
      );
    }
    assert.match(
      text,
      /certmanager_http_acme_client_request_duration_seconds_count\{[^}]*action="wait_order"/,
    );
    assert.match(text, /^# TYPE certmanager_http_acme_client_request_duration_seconds summary$/m);
    assert.match(
      text,
      /^certmanager_http_acme_client_request_duration_seconds\{quantile="0\.99",[^}]*action="create_order_cert"[^}]*\} [0-9.e-]+$/m,
    );
    assert.match(
      text,
      /action="get_registration",method="HEAD",status="200"/,
      'nonce fetches are counted too',
    );
  });

  it('does not trust Pebble without its caBundle, and does with skipTLSVerify', async () => {
    const untrusting = await client({ caBundle: undefined });
    await assert.rejects(untrusting.directory(), AcmeTransportError);
    const skipping = await client({ caBundle: undefined, skipTLSVerify: true });
    assert.equal(typeof (await skipping.directory()).newOrder, 'string');
  });
});

describe('ACME client against Pebble requiring external account binding', { skip }, () => {
  let pebble: Pebble;
  const clients: AcmeClient[] = [];
  before(async () => {
    pebble = await startPebble({ eabRequired: true });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await pebble?.stop();
  });
  async function client(): Promise<AcmeClient> {
    const c = new AcmeClient({
      directoryUrl: pebble.directoryUrl,
      caBundle: pebble.caBundle,
      accountKey: await ecKey(),
    });
    clients.push(c);
    return c;
  }

  it('announces EAB in the directory and refuses an account without it', async () => {
    const c = await client();
    assert.equal((await c.directory()).meta?.externalAccountRequired, true);
    await assert.rejects(
      c.registerAccount({ termsOfServiceAgreed: true }),
      (e: unknown) => e instanceof AcmeProblemError && e.type === AcmeErrorType.externalAccountRequired,
    );
  });

  it('registers with the key ID and the base64url MAC key from the CA', async () => {
    const c = await client();
    const { account, created } = await c.registerAccount({
      termsOfServiceAgreed: true,
      externalAccountBinding: { keyID: 'kid-1', hmacKey: decodeEabHmacKey(pebble.eabKeys['kid-1']) },
    });
    assert.equal(created, true);
    assert.equal(account.status, 'valid');
  });

  it('refuses a binding signed with the wrong MAC key or an unknown key ID', async () => {
    const wrongKey = Buffer.alloc(32, 7);
    await assert.rejects(
      (await client()).registerAccount({
        termsOfServiceAgreed: true,
        externalAccountBinding: { keyID: 'kid-1', hmacKey: wrongKey },
      }),
      (e: unknown) =>
        e instanceof AcmeProblemError &&
        e.type === AcmeErrorType.unauthorized &&
        /external account binding/.test(e.detail),
    );
    await assert.rejects(
      (await client()).registerAccount({
        termsOfServiceAgreed: true,
        externalAccountBinding: { keyID: 'no-such-kid', hmacKey: wrongKey },
      }),
      (e: unknown) => e instanceof AcmeProblemError && e.isClientError,
    );
  });
});

/**
 * A minimal ACME server for what Pebble never does: rate limits and 5xx. It answers the directory, nonces
 * and newOrder from a script of canned answers per path; it does not check signatures.
 */
describe('ACME client retries badNonce, 429 and 5xx, and polls by Retry-After', () => {
  let server: Server;
  let base: string;
  const script = new Map<
    string,
    Array<{ status: number; headers?: Record<string, string>; body?: unknown }>
  >();
  const hits: string[] = [];
  /** The nonce of each signed POST, in order, from its protected header. */
  const nonces: string[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        if (req.method === 'POST') {
          const header = JSON.parse(
            Buffer.from((JSON.parse(body) as { protected: string }).protected, 'base64url').toString(),
          ) as { nonce: string };
          nonces.push(header.nonce);
        }
        hits.push(`${req.method} ${path}`);
        res.setHeader('replay-nonce', `nonce-${hits.length}`);
        const next = script.get(path)?.shift();
        if (next) {
          res.writeHead(next.status, next.headers);
          res.end(next.body === undefined ? '' : JSON.stringify(next.body));
          return;
        }
        if (path === '/dir') {
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              newNonce: `${base}/nonce`,
              newAccount: `${base}/acct`,
              newOrder: `${base}/order`,
            }),
          );
        } else if (path === '/nonce') {
          res.end();
        } else {
          res.writeHead(404).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const rateLimited = {
    type: 'urn:ietf:params:acme:error:rateLimited',
    detail: 'too many new orders recently',
  };
  const created = {
    status: 201,
    headers: { location: 'http://example.invalid/order/1', 'content-type': 'application/json' },
    body: { status: 'pending', identifiers: [], authorizations: [], finalize: 'http://example.invalid/f' },
  };

  async function client(): Promise<AcmeClient> {
    return new AcmeClient({
      directoryUrl: `${base}/dir`,
      accountKey: await ecKey(),
      accountUrl: `${base}/acct/1`,
      retry: { maxWaitMs: 2000 },
    });
  }

  it('waits out a short Retry-After on 429 and on 503, then succeeds', async () => {
    script.set('/dir', [{ status: 503, headers: { 'retry-after': '1' }, body: { detail: 'maintenance' } }]);
    script.set('/order', [{ status: 429, headers: { 'retry-after': '1' }, body: rateLimited }, created]);
    hits.length = 0;
    const c = await client();
    const started = Date.now();
    const order = await c.newOrder({ identifiers: [{ type: 'dns', value: 'a.example.test' }] });
    assert.equal(order.url, 'http://example.invalid/order/1');
    assert.ok(Date.now() - started >= 1900, 'both Retry-After waits were honoured');
    assert.deepEqual(
      hits.filter((h) => h !== 'HEAD /nonce'),
      ['GET /dir', 'GET /dir', 'POST /order', 'POST /order'],
    );
    await c.close();
  });

  it('returns a long Retry-After to the caller as a typed rateLimited problem, without waiting', async () => {
    script.set('/order', [{ status: 429, headers: { 'retry-after': '3600' }, body: rateLimited }]);
    const c = await client();
    const started = Date.now();
    const error = await c
      .newOrder({ identifiers: [{ type: 'dns', value: 'a.example.test' }] })
      .catch((e: unknown) => e);
    assert.ok(Date.now() - started < 1000);
    assert.ok(error instanceof AcmeProblemError, String(error));
    assert.equal(error.type, AcmeErrorType.rateLimited);
    assert.equal(error.status, 429);
    assert.equal(error.isClientError, false, 'a 429 is worth retrying later');
    assert.ok(error.retryAfter && Math.abs(error.retryAfter.getTime() - (Date.now() + 3600_000)) < 5000);
    await c.close();
  });

  it('signs again with the nonce that came with a badNonce refusal', async () => {
    const badNonce = {
      type: 'urn:ietf:params:acme:error:badNonce',
      detail: 'JWS has an invalid anti-replay nonce',
    };
    script.set('/order', [
      { status: 400, headers: { 'replay-nonce': 'fresh-1' }, body: badNonce },
      { status: 400, headers: { 'replay-nonce': 'fresh-2' }, body: badNonce },
      created,
    ]);
    nonces.length = 0;
    const c = await client();
    const order = await c.newOrder({ identifiers: [{ type: 'dns', value: 'a.example.test' }] });
    assert.equal(order.status, 'pending');
    assert.deepEqual(nonces.slice(1), ['fresh-1', 'fresh-2'], 'each retry used the refusal nonce');
    await c.close();
  });

  it('polls an order as its Retry-After says', async () => {
    const order = (status: string) => ({
      status: 200,
      headers: { 'retry-after': '1', 'content-type': 'application/json' },
      body: { status, identifiers: [], authorizations: [], finalize: 'http://example.invalid/f' },
    });
    script.set('/order/7', [order('processing'), order('processing'), order('valid')]);
    const c = await client();
    const started = Date.now();
    const done = await c.waitForOrder(`${base}/order/7`);
    assert.equal(done.status, 'valid');
    assert.equal(done.url, `${base}/order/7`);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 1900 && elapsed < 4000, `two waits of Retry-After 1 s took ${elapsed} ms`);
    await c.close();
  });

  it('gives up on a 5xx after the attempts of the policy, with the problem it got', async () => {
    const failure = {
      status: 500,
      body: { type: 'urn:ietf:params:acme:error:serverInternal', detail: 'boom' },
    };
    script.set('/order', [failure, failure, failure, created]);
    const c = await client();
    await assert.rejects(
      c.newOrder({ identifiers: [{ type: 'dns', value: 'a.example.test' }] }),
      (e: unknown) =>
        e instanceof AcmeProblemError && e.type === AcmeErrorType.serverInternal && e.detail === 'boom',
    );
    assert.equal(script.get('/order')?.length, 1, 'three attempts, then the error');
    script.delete('/order');
    await c.close();
  });
});
