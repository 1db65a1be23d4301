/**
 * The RFC2136 provider against a real BIND (@certkit/testenv/bind/bind): signed updates with every HMAC
 * algorithm, checked with node:dns and dig; refusals for a wrong secret, an unknown key and no signature; TCP;
 * a silent server.
 */

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { type BindServer, bindAvailable, startBind } from '@certkit/testenv/bind/bind';
import { startDnsFront } from '@certkit/testenv/bind/dns-front';
import type { DNS01ChangeRequest, SecretReader } from './provider.ts';
import { parseCheckNameserver } from './nameserver.ts';
import { DNS01Resolver } from './propagation.ts';
import { DnsUpdateError, rfc2136Provider } from './rfc2136.ts';

const skip = bindAvailable() ? false : 'named and dig are not installed (Debian bind9, bind9-dnsutils)';

describe('rfc2136 provider against BIND', { skip }, () => {
  let bind: BindServer;
  let secrets: SecretReader;
  const provider = rfc2136Provider({ timeoutMs: 5000 });

  before(async () => {
    bind = await startBind();
    // The Secrets an Issuer in namespace "certs" refers to: one per key, plus a wrong one.
    const data: Record<string, Buffer> = { wrong: Buffer.from(Buffer.alloc(32, 9).toString('base64')) };
    for (const key of Object.values(bind.keys)) data[key.algorithm] = Buffer.from(key.secret);
    secrets = (namespace, name) =>
      Promise.resolve(namespace === 'certs' && name === 'tsig' ? data : undefined);
  });
  after(async () => {
    await bind?.stop();
  });

  function request(
    value: string,
    config: Record<string, unknown>,
    fqdn = '_acme-challenge.www.example.test.',
  ) {
    return {
      dnsName: 'www.example.test',
      fqdn,
      zone: 'example.test.',
      value,
      config: { nameserver: bind.address, ...config },
      resourceNamespace: 'certs',
      secrets,
      allowAmbientCredentials: false,
    } satisfies DNS01ChangeRequest;
  }

  function signedWith(algorithm: string, secretKey = algorithm): Record<string, unknown> {
    return {
      tsigKeyName: bind.keys[algorithm].name,
      tsigAlgorithm: algorithm,
      tsigSecretSecretRef: { name: 'tsig', key: secretKey },
    };
  }

  for (const algorithm of ['HMACMD5', 'HMACSHA1', 'HMACSHA224', 'HMACSHA256', 'HMACSHA384', 'HMACSHA512']) {
    it(`adds and removes a TXT value signed with ${algorithm}`, async () => {
      const fqdn = `_acme-challenge.${algorithm.toLowerCase()}.example.test.`;
      const value = `token-${algorithm}`;
      await provider.present(request(value, signedWith(algorithm), fqdn));
      assert.deepEqual(await bind.txt(fqdn), [value]);
      assert.deepEqual(await bind.dig(fqdn, 'TXT'), [`"${value}"`]);
      await provider.cleanUp(request(value, signedWith(algorithm), fqdn));
      assert.deepEqual(await bind.txt(fqdn), []);
      assert.deepEqual(await bind.dig(fqdn, 'TXT'), []);
    });
  }

  it('writes the TXT record with TTL 60, as cert-manager', async () => {
    await provider.present(request('ttl-check', signedWith('HMACSHA256')));
    try {
      const lines = await bind.dig('_acme-challenge.www.example.test', 'TXT', ['+noall', '+answer']);
      assert.equal(lines.length, 1);
      assert.match(lines[0], /^_acme-challenge\.www\.example\.test\.\s+60\s+IN\s+TXT\s+"ttl-check"$/);
    } finally {
      await provider.cleanUp(request('ttl-check', signedWith('HMACSHA256')));
    }
  });

  it('keeps the other value at the name when one is removed (wildcard and apex share a name)', async () => {
    const config = signedWith('HMACSHA256');
    await provider.present(request('for-apex', config));
    await provider.present(request('for-wildcard', config));
    assert.deepEqual((await bind.txt('_acme-challenge.www.example.test')).sort(), [
      'for-apex',
      'for-wildcard',
    ]);
    await provider.cleanUp(request('for-apex', config));
    assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), ['for-wildcard']);
    await provider.cleanUp(request('for-wildcard', config));
    assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), []);
    // Removing a value that is not there is not an error (RFC 2136 §3.4.2.4).
    await provider.cleanUp(request('for-wildcard', config));
  });

  it('sends over TCP when the solver says protocol: TCP', async () => {
    const config = { ...signedWith('HMACSHA512'), protocol: 'TCP' };
    await provider.present(request('over-tcp', config));
    assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), ['over-tcp']);
    await provider.cleanUp(request('over-tcp', config));
    assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), []);
  });

  it('reports a wrong TSIG secret as NOTAUTH with BADSIG, and writes nothing', async () => {
    await assert.rejects(
      provider.present(request('forged', signedWith('HMACSHA256', 'wrong'))),
      (err: Error) => {
        assert.ok(err instanceof DnsUpdateError);
        assert.equal(err.message, 'DNS update failed. Server replied: NOTAUTH (TSIG error BADSIG)');
        assert.equal(err.rcode, 'NOTAUTH');
        return true;
      },
    );
    assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), []);
  });

  it('reports a key the server does not know as NOTAUTH with BADKEY', async () => {
    const config = { ...signedWith('HMACSHA256'), tsigKeyName: 'nobody' };
    await assert.rejects(provider.present(request('unknown-key', config)), {
      message: 'DNS update failed. Server replied: NOTAUTH (TSIG error BADKEY)',
    });
  });

  it('reports an unsigned update as REFUSED (the zone takes signed updates only)', async () => {
    await assert.rejects(provider.present(request('unsigned', {})), {
      message: 'DNS update failed. Server replied: REFUSED',
    });
    assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), []);
  });

  it('reports an update for a zone the server does not serve', async () => {
    const outside = { ...request('elsewhere', signedWith('HMACSHA256')), zone: 'other.test.' };
    await assert.rejects(provider.present(outside), /DNS update failed\. Server replied: (NOTAUTH|REFUSED)/);
  });

  it('asks again over TCP when the UDP answer is truncated, for updates and for the check', async () => {
    const front = await startDnsFront(bind.port, 'truncate');
    try {
      const config = { ...signedWith('HMACSHA256'), nameserver: front.address };
      await provider.present(request('via-tcp-fallback', config));
      assert.equal(front.udpMessages, 1);
      assert.equal(front.tcpConnections, 1);
      assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), ['via-tcp-fallback']);
      const resolver = new DNS01Resolver({ timeoutMs: 3000 });
      const servers = [parseCheckNameserver(front.address)];
      assert.equal(
        await resolver.serversHoldTXT('_acme-challenge.www.example.test.', 'via-tcp-fallback', servers),
        true,
      );
      assert.equal(front.udpMessages, 2);
      assert.equal(front.tcpConnections, 2);
      await provider.cleanUp(request('via-tcp-fallback', config));
      assert.deepEqual(await bind.txt('_acme-challenge.www.example.test'), []);
    } finally {
      await front.close();
    }
  });

  it('gives up on a server that does not answer, after the timeout', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const quick = rfc2136Provider({ timeoutMs: 300 });
      const started = Date.now();
      await assert.rejects(
        quick.present({ ...request('x', {}), config: { nameserver: `127.0.0.1:${silent.address().port}` } }),
        /DNS update failed: DNS exchange with 127\.0\.0\.1:\d+ over UDP: no answer within 300 ms/,
      );
      assert.ok(Date.now() - started < 3000);
    } finally {
      silent.close();
    }
  });
});
