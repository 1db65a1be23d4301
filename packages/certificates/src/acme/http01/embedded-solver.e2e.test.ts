/**
 * The embedded HTTP-01 solver end to end: its listener on a real loopback port, driven by raw HTTP, and
 * cert-manager's self-check against it, directly and through redirects (plain and HTTPS), with names
 * resolved by a real DNS server (pebble-challtestsrv; those tests skip, saying why, without it).
 */

import assert from 'node:assert/strict';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestCa } from '@certkit/testenv/pki/auth-certs';
import type { Challenge } from '../../api/acme-types.ts';
import {
  challTestSrvMissing,
  type ChallTestSrv,
  startChallTestSrv,
} from '@certkit/testenv/pebble/challtestsrv';
import { bindAvailable, startBind } from '@certkit/testenv/bind/bind';
import { startDnsFront } from '@certkit/testenv/bind/dns-front';
import { freePort } from '@certkit/testenv/net/free-ports';
import { type ChallengeListener, LISTENER_LIMITS } from './challenge-server.ts';
import { EmbeddedHTTP01Solver } from './embedded-solver.ts';
import { nameserverLookup, ownListenerAgent, selfCheck } from './self-check.ts';

function challenge(
  dnsName: string,
  token: string,
  key = `${token}.thumbprint-of-the-account-key`,
): Challenge {
  return {
    apiVersion: 'acme.cert-manager.io/v1',
    kind: 'Challenge',
    metadata: { name: `c-${token}`, namespace: 'default' },
    spec: {
      url: `https://acme.example/chall/${token}`,
      authorizationURL: `https://acme.example/authz/${token}`,
      dnsName,
      type: 'HTTP-01',
      token,
      key,
      solver: { http01: { ingress: {} } },
      issuerRef: { name: 'acme' },
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One raw HTTP request to the listener, with the Host header given (what an ACME validator sends). */
function httpGet(port: number, path: string, host: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('the embedded HTTP-01 listener', () => {
  const solver = new EmbeddedHTTP01Solver();
  let listener: ChallengeListener;
  let port: number;

  before(async () => {
    listener = await solver.listen({ host: '127.0.0.1', port: 0 });
    port = listener.address.port;
  });
  after(() => listener?.close());

  it('answers a presented token with its key authorization, for its host only', async () => {
    const ch = challenge('www.example.com', 'tok-A_1');
    await solver.present(ch);
    const res = await httpGet(port, '/.well-known/acme-challenge/tok-A_1', 'www.example.com');
    assert.equal(res.status, 200);
    assert.equal(res.body, ch.spec.key);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache, no-store, must-revalidate');
    // With a port in the Host header, in another case, and as HEAD.
    assert.equal(
      (await httpGet(port, '/.well-known/acme-challenge/tok-A_1', 'WWW.Example.com:80')).body,
      ch.spec.key,
    );
    const head = await httpGet(port, '/.well-known/acme-challenge/tok-A_1', 'www.example.com', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], String(ch.spec.key.length));
    // A query string is not part of the path.
    assert.equal(
      (await httpGet(port, '/.well-known/acme-challenge/tok-A_1?x=1', 'www.example.com')).status,
      200,
    );
    await solver.cleanUp(ch);
  });

  it('answers IP identifiers, IPv6 bracketed in the Host header', async () => {
    const v4 = challenge('192.0.2.7', 'tok-ip4');
    const v6 = challenge('2001:db8::7', 'tok-ip6');
    await solver.present(v4);
    await solver.present(v6);
    assert.equal((await httpGet(port, '/.well-known/acme-challenge/tok-ip4', '192.0.2.7')).body, v4.spec.key);
    assert.equal(
      (await httpGet(port, '/.well-known/acme-challenge/tok-ip6', '[2001:db8::7]:80')).body,
      v6.spec.key,
    );
    await solver.cleanUp(v4);
    await solver.cleanUp(v6);
  });

  it('404s everything else: other hosts, tokens, paths and methods', async () => {
    const ch = challenge('www.example.com', 'tok-B');
    await solver.present(ch);
    const rows: [string, string, string][] = [
      ['GET', '/.well-known/acme-challenge/tok-B', 'other.example.com'],
      ['GET', '/.well-known/acme-challenge/tok-B', ''],
      ['GET', '/.well-known/acme-challenge/unknown', 'www.example.com'],
      ['GET', '/.well-known/acme-challenge/', 'www.example.com'],
      ['GET', '/.well-known/acme-challenge/tok-B/more', 'www.example.com'],
      ['GET', '/.well-known/acme-challenge/../acme-challenge/tok-B', 'www.example.com'],
      ['GET', '/.well-known/acme-challenge/tok%2DB', 'www.example.com'],
      ['GET', '/', 'www.example.com'],
      ['GET', '/healthz', 'www.example.com'],
      ['POST', '/.well-known/acme-challenge/tok-B', 'www.example.com'],
      ['DELETE', '/.well-known/acme-challenge/tok-B', 'www.example.com'],
    ];
    for (const [method, path, host] of rows) {
      const res = await httpGet(port, path, host, method);
      assert.equal(res.status, 404, `${method} ${path} Host: ${host}`);
      assert.equal(res.body, '404 page not found\n');
      assert.ok(!res.body.includes(ch.spec.key));
    }
    await solver.cleanUp(ch);
  });

  it('404s a token after cleanUp, and serves it again once presented again', async () => {
    const ch = challenge('www.example.com', 'tok-C');
    await solver.present(ch);
    await solver.present(ch); // idempotent
    assert.equal((await httpGet(port, '/.well-known/acme-challenge/tok-C', 'www.example.com')).status, 200);
    await solver.cleanUp(ch);
    await solver.cleanUp(ch); // idempotent
    assert.equal((await httpGet(port, '/.well-known/acme-challenge/tok-C', 'www.example.com')).status, 404);
    assert.equal(solver.presented.size, 0);
    await solver.present(ch);
    assert.equal((await httpGet(port, '/.well-known/acme-challenge/tok-C', 'www.example.com')).status, 200);
    await solver.cleanUp(ch);
  });

  it('refuses oversized request headers with 431 and keeps serving', async () => {
    const res = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(16 * 1024)}\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(res, /^HTTP\/1\.1 431 /);
    assert.equal((await httpGet(port, '/', 'x')).status, 404);
  });

  it('cuts off a client that sends its headers too slowly, and the oldest idle connection past the bound', async () => {
    const strict = new EmbeddedHTTP01Solver();
    const strictListener = await strict.listen(
      { host: '127.0.0.1', port: 0 },
      {
        ...LISTENER_LIMITS,
        headersTimeoutMs: 300,
        requestTimeoutMs: 400,
        checkIntervalMs: 50,
        maxConnections: 1,
      },
    );
    const strictPort = strictListener.address.port;
    try {
      const started = Date.now();
      const slow = await new Promise<string>((resolve, reject) => {
        const socket = connect(strictPort, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n'));
        let text = '';
        socket.on('data', (d) => (text += d));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(slow, /^HTTP\/1\.1 408 /);
      assert.ok(Date.now() - started < 3_000, `cut after ${Date.now() - started} ms`);
      // One idle connection holds the only slot: it is closed to let the next one in, whose request is
      // answered (refusing the newcomer would let whoever holds the slots starve the ACME server).
      const holder = connect(strictPort, '127.0.0.1');
      const holderClosed = new Promise((resolve) => holder.once('close', resolve));
      holder.on('error', () => {});
      await new Promise((resolve) => holder.once('connect', resolve));
      await new Promise((r) => setTimeout(r, 50));
      const answered = await new Promise<string>((resolve) => {
        const socket = connect(strictPort, '127.0.0.1', () =>
          socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (d) => (text += d));
        socket.on('close', () => resolve(text));
        socket.on('error', () => resolve(text));
      });
      assert.match(answered, /^HTTP\/1\.1 404 /);
      await holderClosed;
      holder.destroy();
    } finally {
      await strictListener.close();
    }
  });

  it('cannot bind a port that is taken', async () => {
    await assert.rejects(new EmbeddedHTTP01Solver().listen({ host: '127.0.0.1', port }), /EADDRINUSE/);
  });
});

describe('the HTTP-01 self-check', () => {
  const solver = new EmbeddedHTTP01Solver();
  let listener: ChallengeListener;
  let port: number;
  const fast = { requiredPasses: 2, intervalMs: 20 };

  before(async () => {
    listener = await solver.listen({ host: '127.0.0.1', port: 0 });
    port = listener.address.port;
  });
  after(() => listener?.close());

  it('passes while the key is presented and fails after cleanUp', async () => {
    const ch = challenge('127.0.0.1', 'self-1');
    await solver.present(ch);
    await selfCheck(ch.spec, { ...fast, port });
    await solver.cleanUp(ch);
    await assert.rejects(selfCheck(ch.spec, { ...fast, port }), {
      message: "wrong status code '404', expected '200'",
    });
  });

  it('fails when the body is not exactly the key, without repeating the body', async () => {
    const ch = challenge('127.0.0.1', 'self-2');
    await solver.present(ch);
    await assert.rejects(selfCheck({ ...ch.spec, key: `${ch.spec.key}x` }, { ...fast, port }), {
      message: `did not get expected response "${ch.spec.key}x" when querying endpoint`,
    });
    await solver.cleanUp(ch);
  });

  it('needs every pass: a key removed between passes fails the check', async () => {
    const ch = challenge('127.0.0.1', 'self-3');
    await solver.present(ch);
    setTimeout(() => void solver.cleanUp(ch), 100);
    await assert.rejects(
      selfCheck(ch.spec, { requiredPasses: 5, intervalMs: 80, port }),
      /wrong status code '404'/,
    );
  });

  it('runs its passes back to back when its own listener answers every one (ADR 1011)', async () => {
    const ch = challenge('127.0.0.1', 'self-local');
    await solver.present(ch);
    const started = performance.now();
    const result = await selfCheck(ch.spec, {
      requiredPasses: 5,
      intervalMs: 1_000,
      port,
      localAnswers: solver.presented.localAnswers,
    });
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { answeredHere: true });
    assert.ok(elapsed < 1_000, `five passes with no pause between them (${elapsed.toFixed(0)} ms)`);
    assert.equal(solver.presented.localAnswers.pending, 0, 'every id issued was taken back');
    await solver.cleanUp(ch);
  });

  it('keeps the pause between passes when another server answers, even with the right key', async () => {
    const ch = challenge('127.0.0.1', 'self-elsewhere');
    // Not this process's listener: a server that knows the key (a solver Pod behind an Ingress, say).
    const elsewhere = createHttpServer((_req, res) => res.end(ch.spec.key));
    const elsewherePort = await listen(elsewhere);
    try {
      const started = performance.now();
      const result = await selfCheck(ch.spec, {
        requiredPasses: 3,
        intervalMs: 300,
        port: elsewherePort,
        localAnswers: solver.presented.localAnswers,
      });
      const elapsed = performance.now() - started;
      assert.deepEqual(result, { answeredHere: false });
      assert.ok(elapsed >= 600, `three passes 300 ms apart (${elapsed.toFixed(0)} ms)`);
      assert.equal(solver.presented.localAnswers.pending, 0);
    } finally {
      await close(elsewhere);
    }
  });

  it("marks only the ids the self-check issued: a stranger's header is ignored", async () => {
    const ch = challenge('127.0.0.1', 'self-stranger');
    await solver.present(ch);
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: `/.well-known/acme-challenge/${ch.spec.token}`,
          headers: { host: '127.0.0.1', 'x-certkit-self-check': 'guessed' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer, 200);
    assert.equal(solver.presented.localAnswers.take('guessed'), false);
    assert.equal(solver.presented.localAnswers.pending, 0, 'nothing was remembered for it');
    await solver.cleanUp(ch);
  });

  it('carries the passes its own listener answers on one kept-alive connection', async () => {
    const ownPort = await freePort();
    // A TCP relay in front of the solver's listener counts the connections the self-check opens.
    const relayPort = await freePort();
    const own = new EmbeddedHTTP01Solver({ port: relayPort });
    const ownListener = await own.listen({ host: '127.0.0.1', port: ownPort });
    let connections = 0;
    const sockets = new Set<Socket>();
    const relay = createTcpServer((client) => {
      connections++;
      const upstream = connect(ownPort, '127.0.0.1');
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve));
    try {
      const ch = challenge('127.0.0.1', 'self-reuse');
      await own.present(ch);
      // As the Challenge sync runs them: one pass per check, back to back while answered here.
      for (let pass = 0; pass < 5; pass++)
        assert.deepEqual(await own.check(ch, undefined, 1), { answeredHere: true });
      assert.equal(connections, 1, 'five passes over one connection');
      assert.equal(own.presented.localAnswers.pending, 0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
      await ownListener.close();
    }
  });

  it('opens a connection per request to any other server, even with the kept-alive Agent', async () => {
    const ch = challenge('127.0.0.1', 'self-elsewhere-conns');
    const elsewhere = createHttpServer((_req, res) => res.end(ch.spec.key));
    let connections = 0;
    elsewhere.on('connection', () => connections++);
    const elsewherePort = await listen(elsewhere);
    const agent = ownListenerAgent();
    try {
      const result = await selfCheck(ch.spec, {
        requiredPasses: 3,
        intervalMs: 0,
        port: elsewherePort,
        localAnswers: solver.presented.localAnswers,
        agent,
      });
      assert.deepEqual(result, { answeredHere: false });
      assert.equal(connections, 3, 'no connection to another server is reused');
    } finally {
      agent.destroy();
      elsewhere.closeAllConnections();
      await close(elsewhere);
    }
  });

  it("the solver's check presents again first, as upstream's does, then self-checks", async () => {
    const ownPort = await freePort();
    const own = new EmbeddedHTTP01Solver({ ...fast, port: ownPort });
    const ownListener = await own.listen({ host: '127.0.0.1', port: ownPort });
    try {
      const ch = challenge('127.0.0.1', 'self-4');
      // Never presented (or cleaned up by a restart): check puts it back and then finds it, here.
      assert.deepEqual(await own.check(ch), { answeredHere: true });
      assert.equal(own.presented.lookup('self-4', '127.0.0.1'), ch.spec.key);
      await own.cleanUp(ch);
      assert.equal(own.presented.size, 0);
    } finally {
      await ownListener.close();
    }
  });

  it('reports a refused connection with the URL', async () => {
    const spare = createHttpServer();
    const closedPort = await listen(spare);
    await close(spare);
    await assert.rejects(selfCheck(challenge('127.0.0.1', 'self-5').spec, { ...fast, port: closedPort }), {
      message: `failed to perform self check GET request 'http://127.0.0.1:${closedPort}/.well-known/acme-challenge/self-5': connect ECONNREFUSED 127.0.0.1:${closedPort}`,
    });
  });

  it('gives up on a server that never answers after the attempt timeout', async () => {
    const silent = createHttpServer(() => {});
    const silentPort = await listen(silent);
    try {
      await assert.rejects(
        selfCheck(challenge('127.0.0.1', 'self-6').spec, {
          ...fast,
          port: silentPort,
          attemptTimeoutMs: 300,
        }),
        /failed to perform self check GET request '.*': timeout awaiting response/,
      );
    } finally {
      silent.closeAllConnections();
      await close(silent);
    }
  });

  it('follows redirects to another port and to HTTPS with a certificate nobody trusts', async () => {
    const ch = challenge('127.0.0.1', 'self-7');
    await solver.present(ch);
    const ca = await createTestCa('untrusted test CA');
    const leaf = await ca.issue({
      commonName: '127.0.0.1',
      ipAddresses: ['127.0.0.1'],
      usages: ['serverAuth'],
    });
    // HTTPS hop: answers with the key itself (as a TLS-terminating proxy in front of the listener would).
    const tls = createHttpsServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
      res.end(req.url === '/.well-known/acme-challenge/self-7' ? ch.spec.key : 'nope');
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const tlsPort = (tls.address() as AddressInfo).port;
    let hops = 0;
    const redirector = createHttpServer((req, res) => {
      hops++;
      const target =
        req.url === '/to-tls'
          ? `https://127.0.0.1:${tlsPort}/.well-known/acme-challenge/self-7`
          : req.url?.startsWith('/loop')
            ? `/loop${hops}`
            : req.url === '/.well-known/acme-challenge/self-7'
              ? `http://127.0.0.1:${port}${req.url}`
              : '/to-tls';
      res.writeHead(req.url === '/to-tls' ? 308 : 302, { Location: target });
      res.end();
    });
    const redirectorPort = await listen(redirector);
    try {
      // Plain HTTP redirect to the listener on another port.
      await selfCheck(ch.spec, { ...fast, port: redirectorPort });
      assert.equal(hops, 2);
      // Redirects ending at HTTPS, unverified.
      await selfCheck({ ...ch.spec, token: 'via-tls' }, { requiredPasses: 1, port: redirectorPort });
    } finally {
      await solver.cleanUp(ch);
      await close(redirector);
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it('stops after ten redirects', async () => {
    let n = 0;
    const loop = createHttpServer((_req, res) => {
      res.writeHead(302, { Location: `/again-${n++}` });
      res.end();
    });
    const loopPort = await listen(loop);
    try {
      await assert.rejects(
        selfCheck(challenge('127.0.0.1', 'self-8').spec, { requiredPasses: 1, port: loopPort }),
        {
          message: `failed to perform self check GET request 'http://127.0.0.1:${loopPort}/.well-known/acme-challenge/self-8': stopped after 10 redirects`,
        },
      );
      assert.equal(n, 11);
    } finally {
      await close(loop);
    }
  });
});

const dnsMissing = challTestSrvMissing();
if (dnsMissing) console.log(`# skipping the self-check name resolution tests: ${dnsMissing}`);

describe('the HTTP-01 self-check with --acme-http01-solver-nameservers', { skip: dnsMissing }, () => {
  const solver = new EmbeddedHTTP01Solver();
  let listener: ChallengeListener;
  let dns: ChallTestSrv;

  before(async () => {
    listener = await solver.listen({ host: '127.0.0.1', port: 0 });
    dns = await startChallTestSrv();
    await dns.addA('www.certkit.test', ['127.0.0.1']);
  });
  after(async () => {
    await listener?.close();
    await dns?.close();
  });

  it('resolves the name through the given nameserver only', async () => {
    const ch = challenge('www.certkit.test', 'dns-1');
    await solver.present(ch);
    const port = listener.address.port;
    await selfCheck(ch.spec, { requiredPasses: 1, port, nameservers: [dns.dnsAddress] });
    // The system resolver does not know the test zone.
    await assert.rejects(
      selfCheck(ch.spec, { requiredPasses: 1, port }),
      /failed to perform self check GET request 'http:\/\/www\.certkit\.test:\d+\/\.well-known\/acme-challenge\/dns-1': getaddrinfo (ENOTFOUND|EAI_AGAIN)/,
    );
    // A name the nameserver has no address for.
    await assert.rejects(
      selfCheck(
        { ...ch.spec, dnsName: 'missing.certkit.test' },
        { requiredPasses: 1, port, nameservers: [dns.dnsAddress] },
      ),
      /lookup missing\.certkit\.test on 127\.0\.0\.1:\d+: no such host/,
    );
    await solver.cleanUp(ch);
  });

  it("the solver's check uses its configured nameservers and port", async () => {
    const ownPort = await freePort();
    const own = new EmbeddedHTTP01Solver({
      requiredPasses: 2,
      intervalMs: 20,
      port: ownPort,
      nameservers: [dns.dnsAddress],
    });
    const ownListener = await own.listen({ host: '127.0.0.1', port: ownPort });
    try {
      const ch = challenge('www.certkit.test', 'dns-2');
      await own.check(ch);
      await own.cleanUp(ch);
      await assert.rejects(
        own.check({ ...ch, spec: { ...ch.spec, dnsName: 'missing.certkit.test' } }),
        /no such host/,
      );
    } finally {
      await ownListener.close();
    }
  });
});

describe(
  'the self-check nameserver lookup keeps answers for their TTL, at most 1 s',
  { skip: !bindAvailable() },
  () => {
    it('answers from what it kept until the TTL or 1 s ends, and keeps nothing of a TTL 0 answer', async () => {
      const bind = await startBind({
        zones: [{ name: 'cache.test', records: ['long 60 IN A 127.0.0.2', 'zero 0 IN A 127.0.0.3'] }],
      });
      let now = 1_000_000;
      const lookup = nameserverLookup([bind.address], () => now);
      const resolve = (name: string) =>
        new Promise<string>((done, fail) =>
          lookup(name, {}, (err, address) => (err ? fail(err) : done(address as string))),
        );
      try {
        assert.equal(await resolve('long.cache.test'), '127.0.0.2');
        assert.equal(await resolve('zero.cache.test'), '127.0.0.3');
      } finally {
        await bind.stop();
      }
      // The server is gone: only what was kept can answer.
      now += 999;
      assert.equal(await resolve('long.cache.test'), '127.0.0.2', 'kept for 1 s (its TTL is 60 s)');
      await assert.rejects(resolve('zero.cache.test'), /no such host/, 'a TTL 0 answer is not kept');
      now += 1;
      await assert.rejects(resolve('long.cache.test'), /no such host/, 'not kept longer than 1 s');
    });

    it("keeps a name's missing AAAA records as long as its A records, and keeps nothing of a name with none", async () => {
      const bind = await startBind({ zones: [{ name: 'nodata.test', records: ['v4 60 IN A 127.0.0.4'] }] });
      const front = await startDnsFront(bind.port);
      const lookup = nameserverLookup([front.address]);
      // As node:net asks when it connects (autoSelectFamily): every address of both families.
      const resolveAll = (name: string) =>
        new Promise<unknown>((done, fail) =>
          lookup(name, { all: true }, (err, addresses) => (err ? fail(err) : done(addresses))),
        );
      try {
        for (let pass = 0; pass < 5; pass++) {
          assert.deepEqual(await resolveAll('v4.nodata.test'), [{ address: '127.0.0.4', family: 4 }]);
        }
        assert.equal(front.udpMessages, 2, 'one A and one AAAA query for five lookups');
        await assert.rejects(resolveAll('none.nodata.test'), /no such host/);
        await assert.rejects(resolveAll('none.nodata.test'), /no such host/);
        assert.equal(front.udpMessages, 6, 'a name with no addresses is asked again');
      } finally {
        await front.close();
        await bind.stop();
      }
    });
  },
);
