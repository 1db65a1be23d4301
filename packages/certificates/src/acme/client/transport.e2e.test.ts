import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loopbackServingCertificates } from '@certkit/testenv/pki/loopback-serving';
import { createTestCa } from '@certkit/testenv/pki/auth-certs';
import { AcmeTransport } from './transport.ts';

/**
 * The transport against a server that offers both HTTP/2 and HTTP/1.1 by ALPN, as Let's Encrypt and Pebble
 * do: it must pick HTTP/1.1, as cert-manager's client does (undici would take HTTP/2 by default, with which
 * requests to Pebble stalled under load).
 */
describe('AcmeTransport', () => {
  let dir: string;
  let server: Http2SecureServer;
  let url: string;
  let ca: string;
  const versions: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-acme-transport-'));
    const pki = await loopbackServingCertificates(dir);
    ca = pki.caCertPem;
    server = createSecureServer({ cert: pki.certPem, key: pki.keyPem, allowHTTP1: true }, (req, res) => {
      versions.push(req.httpVersion);
      res.setHeader('replay-nonce', 'n-1');
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/directory`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("names spec.acme.caBundle, not Node's options, when the server's chain is not trusted", async () => {
    const untrusted = new AcmeTransport();
    const otherCa = new AcmeTransport({ caBundle: (await createTestCa('another CA')).certPem });
    try {
      await assert.rejects(untrusted.send('discover', 'GET', url), {
        name: 'AcmeTransportError',
        message: `ACME request to ${url} failed: tls: failed to verify certificate: x509: certificate signed by unknown authority (unable to verify the first certificate): give the CA that signed the server's certificate in spec.acme.caBundle`,
      });
      await assert.rejects(otherCa.send('discover', 'GET', url), {
        name: 'AcmeTransportError',
        message: `ACME request to ${url} failed: tls: failed to verify certificate: x509: certificate signed by unknown authority (unable to verify the first certificate): spec.acme.caBundle does not hold the CA that signed the server's certificate`,
      });
    } finally {
      await untrusted.close();
      await otherCa.close();
    }
  });

  it('speaks HTTP/1.1 to a server that offers HTTP/2 too', async () => {
    const transport = new AcmeTransport({ caBundle: ca });
    try {
      const first = await transport.send('discover', 'GET', url);
      const second = await transport.send('discover', 'GET', url);
      assert.equal(first.status, 200);
      assert.equal(second.headers['replay-nonce'], 'n-1');
      assert.deepEqual(versions, ['1.1', '1.1']);
    } finally {
      await transport.close();
    }
  });
});
