/**
 * The DNS-01 solver end to end against real BIND servers (@certkit/testenv/bind/bind): present, propagation
 * check and clean-up through the RFC2136 provider, in recursive-only and authoritative modes, with CNAME
 * following.
 *
 * Two servers play two roles. `primary` takes the updates. `stale` serves the same zones but never sees an
 * update: as a check server it stands for a recursive resolver that has not caught up, so the two check modes
 * give different answers. Both name `localhost.` as the zones' NS, and the authoritative check asks it on
 * the primary's port (cert-manager would use port 53).
 */

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestCa } from '@certkit/testenv/pki/auth-certs';
import { type BindServer, bindAvailable, startBind } from '@certkit/testenv/bind/bind';
import { startDnsFront } from '@certkit/testenv/bind/dns-front';
import { parseCheckNameserver } from './nameserver.ts';
import { DNS01Resolver } from './propagation.ts';
import type { SecretReader } from './provider.ts';
import { type DNS01Challenge, DNS01Solver } from './solver.ts';

const skip = bindAvailable() ? false : 'named and dig are not installed (Debian bind9, bind9-dnsutils)';

describe('DNS-01 solver against BIND', { skip }, () => {
  let primary: BindServer;
  let stale: BindServer;
  let secrets: SecretReader;

  before(async () => {
    [primary, stale] = await Promise.all([startBind(), startBind()]);
    const key = primary.keys.HMACSHA256;
    secrets = (namespace, name) =>
      Promise.resolve(
        namespace === 'certs' && name === 'tsig' ? { secret: Buffer.from(`${key.secret}\n`) } : undefined,
      );
  });
  after(async () => {
    await Promise.all([primary?.stop(), stale?.stop()]);
  });

  function challenge(dnsName: string, key: string, dns01: Record<string, unknown> = {}): DNS01Challenge {
    return {
      dnsName,
      key,
      resourceNamespace: 'certs',
      dns01: {
        rfc2136: {
          nameserver: primary.address,
          tsigKeyName: primary.keys.HMACSHA256.name,
          tsigAlgorithm: 'HMACSHA256',
          tsigSecretSecretRef: { name: 'tsig', key: 'secret' },
        },
        ...dns01,
      },
    };
  }

  function solver(recursiveNameservers: string[], recursiveOnly: boolean): DNS01Solver {
    return new DNS01Solver({
      secrets,
      recursiveNameservers,
      recursiveOnly,
      timeoutMs: 3000,
      authoritativePort: primary.port,
    });
  }

  it('passes the recursive-only check only once the record is there, and fails again after clean-up', async () => {
    const dns01 = solver([primary.address], true);
    const ch = challenge('www.example.test', 'recursive-only-value');
    await assert.rejects(dns01.check(ch), {
      message: 'DNS record for "www.example.test" not yet propagated',
    });
    await dns01.present(ch);
    await dns01.check(ch);
    // Another value at the name does not satisfy the check.
    await assert.rejects(dns01.check({ ...ch, key: 'some-other-value' }), /not yet propagated/);
    await dns01.cleanUp(ch);
    await assert.rejects(dns01.check(ch), /not yet propagated/);
    assert.deepEqual(await primary.txt('_acme-challenge.www.example.test'), []);
  });

  it("asks the zone's authoritative servers unless recursive-only, where only the check servers count", async () => {
    // Check servers: the stale one. Authoritative mode finds the zone and its NS (localhost.) through it, then
    // asks the primary; recursive-only mode asks the stale server, which never gets the record.
    const authoritative = solver([stale.address], false);
    const recursiveOnly = solver([stale.address], true);
    const ch = challenge('auth.example.test', 'authoritative-value');
    await assert.rejects(authoritative.check(ch), /not yet propagated/);
    // Present through the primary (the stale server refuses updates for lack of the primary's keys).
    await solver([primary.address], true).present(ch);
    try {
      await authoritative.check(ch);
      await assert.rejects(recursiveOnly.check(ch), /not yet propagated/);
    } finally {
      await solver([primary.address], true).cleanUp(ch);
    }
    await assert.rejects(authoritative.check(ch), /not yet propagated/);
  });

  it("checks only a solver's own nameservers when it lists them (cert-manager HEAD's dns01.nameservers)", async () => {
    const ch = challenge('own.example.test', 'own-servers-value', { nameservers: [stale.address] });
    // Present and clean-up look up the zone through the solver's servers too; the update goes to the primary.
    const dns01 = solver([primary.address], false);
    await dns01.present(ch);
    try {
      await assert.rejects(dns01.check(ch), /not yet propagated/);
      await dns01.check({ ...ch, dns01: { ...ch.dns01, nameservers: [primary.address] } });
    } finally {
      await dns01.cleanUp(ch);
    }
  });

  it('with cnameStrategy Follow writes the record in the zone the CNAME points to, and cleans it up', async () => {
    const dns01 = solver([primary.address], true);
    const ch = challenge('cname.example.test', 'cname-value', { cnameStrategy: 'Follow' });
    await assert.rejects(dns01.check(ch), /not yet propagated/);
    await dns01.present(ch);
    assert.deepEqual(await primary.txt('_acme-challenge.cname.delegated.test'), ['cname-value']);
    assert.deepEqual(await primary.dig('_acme-challenge.cname.example.test', 'CNAME'), [
      '_acme-challenge.cname.delegated.test.',
    ]);
    await dns01.check(ch);
    await dns01.cleanUp(ch);
    assert.deepEqual(await primary.txt('_acme-challenge.cname.delegated.test'), []);
    await assert.rejects(dns01.check(ch), /not yet propagated/);
  });

  it('without cnameStrategy Follow the record goes at the CNAME itself, which the server ignores', async () => {
    const dns01 = solver([primary.address], true);
    const ch = challenge('cname.example.test', 'not-followed');
    // RFC 2136 §3.4.2.2: a TXT update at a CNAME's name is ignored without an error, so only the check tells.
    await dns01.present(ch);
    await assert.rejects(dns01.check(ch), /not yet propagated/);
    assert.deepEqual(await primary.txt('_acme-challenge.cname.delegated.test'), []);
    await dns01.cleanUp(ch);
  });

  it('reports a CNAME loop', async () => {
    await assert.rejects(
      solver([primary.address], true).check(challenge('loop.example.test', 'x')),
      /Found recursive CNAME record to "_acme-challenge\.loop\.example\.test\." when looking up/,
    );
  });

  it('names an unimplemented provider and a bad recursive nameserver', async () => {
    const dns01 = solver([primary.address], true);
    await assert.rejects(
      dns01.present({ ...challenge('www.example.test', 'x'), dns01: { cloudflare: {} } }),
      {
        name: 'DNS01ConfigError',
        message: 'the DNS01 provider "cloudflare" is not implemented by certkit (implemented: rfc2136)',
      },
    );
    assert.throws(
      () => solver(['127.0.0.1'], true),
      /127\.0\.0\.1: must be in the format <ip address>:<port>/,
    );
  });

  it('finds zones by walking up through SOA answers, and reports an RCODE other than NXDOMAIN', async () => {
    const resolver = new DNS01Resolver({ timeoutMs: 3000 });
    const servers = [parseCheckNameserver(primary.address)];
    assert.equal(await resolver.findZone('_acme-challenge.a.b.www.example.test.', servers), 'example.test.');
    assert.equal(await resolver.findZone('delegated.test', servers), 'delegated.test.');
    // The CNAME's owner is not a zone apex: the walk goes on up.
    assert.equal(await resolver.findZone('_acme-challenge.cname.example.test.', servers), 'example.test.');
    assert.deepEqual(await resolver.authoritativeNameservers('www.example.test.', servers), ['localhost.']);
    // Recursion is off, so a name outside its zones is REFUSED.
    await assert.rejects(
      resolver.findZone('www.elsewhere.invalid.', servers),
      /rcode was expected to be 'NOERROR' or 'NXDOMAIN', but got 'REFUSED'/,
    );
  });

  it('checks through a DNS-over-HTTPS server (an https:// recursive nameserver)', async () => {
    // A DoH front for the primary (RFC 8484 POST), as a public DoH resolver would be.
    const ca = await createTestCa('certkit DoH test CA');
    const serving = await ca.issue({
      commonName: '127.0.0.1',
      ipAddresses: ['127.0.0.1'],
      usages: ['serverAuth'],
    });
    let contentType = 'application/dns-message';
    const doh: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const socket = createSocket('udp4');
        socket.once('message', (reply) => {
          socket.close();
          res.writeHead(200, { 'content-type': contentType }).end(reply);
        });
        socket.send(Buffer.concat(chunks), primary.port, '127.0.0.1');
      });
    });
    await new Promise<void>((resolve) => doh.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(doh.address() as AddressInfo).port}/dns-query`;
      const dns01 = new DNS01Solver({
        secrets,
        recursiveNameservers: [url],
        recursiveOnly: true,
        timeoutMs: 3000,
        dohCA: ca.certPem,
      });
      const ch = challenge('doh.example.test', 'doh-value');
      await assert.rejects(dns01.check(ch), /not yet propagated/);
      await dns01.present(ch);
      await dns01.check(ch);
      contentType = 'text/plain';
      await assert.rejects(
        dns01.check(ch),
        /dns: unexpected Content-Type "text\/plain" from https:\/\/127\.0\.0\.1/,
      );
      contentType = 'application/dns-message';
      await dns01.cleanUp(ch);
      await assert.rejects(dns01.check(ch), /not yet propagated/);
      // Without the CA, the server's certificate is not trusted.
      const untrusted = new DNS01Solver({
        secrets,
        recursiveNameservers: [url],
        recursiveOnly: true,
        timeoutMs: 3000,
      });
      await assert.rejects(untrusted.check(ch), /DNS-over-HTTPS exchange with .*: .*certificate/);
    } finally {
      await new Promise<void>((resolve) => doh.close(() => resolve()));
    }
  });

  it('asks over TCP when a UDP question times out, as cert-manager', async () => {
    const front = await startDnsFront(primary.port, 'drop');
    try {
      const resolver = new DNS01Resolver({ timeoutMs: 300 });
      assert.equal(
        await resolver.findZone('www.example.test.', [parseCheckNameserver(front.address)]),
        'example.test.',
      );
      assert.ok(front.udpMessages >= 1);
      assert.equal(front.tcpConnections, front.udpMessages);
    } finally {
      await front.close();
    }
  });

  it("caches each check server's SOA and NS answers for their TTL", async () => {
    const front = await startDnsFront(primary.port);
    let now = 1_000_000;
    try {
      const resolver = new DNS01Resolver({ timeoutMs: 3000, now: () => now });
      const servers = [parseCheckNameserver(front.address)];
      assert.equal(await resolver.findZone('_acme-challenge.a.example.test.', servers), 'example.test.');
      // Three SOA questions: _acme-challenge.a (NXDOMAIN), a (NXDOMAIN), example.test (the SOA).
      assert.equal(front.udpMessages, 3);
      assert.equal(await resolver.findZone('_acme-challenge.a.example.test.', servers), 'example.test.');
      assert.deepEqual(await resolver.authoritativeNameservers('_acme-challenge.a.example.test.', servers), [
        'localhost.',
      ]);
      assert.equal(front.udpMessages, 4, 'only the NS question is new');
      await resolver.authoritativeNameservers('_acme-challenge.a.example.test.', servers);
      assert.equal(front.udpMessages, 4);
      // The zone's records have TTL 60: a minute later both are asked again.
      now += 61_000;
      await resolver.authoritativeNameservers('_acme-challenge.a.example.test.', servers);
      assert.equal(front.udpMessages, 8);
    } finally {
      await front.close();
    }
  });

  it('tries the next check server when one does not answer', async () => {
    const resolver = new DNS01Resolver({ timeoutMs: 300 });
    // Port 9 on loopback: nothing listens, so UDP is refused (or times out) and the next server answers.
    const servers = [parseCheckNameserver('127.0.0.1:9'), parseCheckNameserver(primary.address)];
    assert.equal(await resolver.findZone('www.example.test.', servers), 'example.test.');
  });
});
