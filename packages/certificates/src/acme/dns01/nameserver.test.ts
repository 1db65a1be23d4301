import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatNameserver,
  parseCheckNameserver,
  parseRFC2136Nameserver,
  systemNameservers,
} from './nameserver.ts';

describe('nameservers', () => {
  it("reads the rfc2136 nameserver as cert-manager's ValidNameserver: port 53 by default, IPv6 in brackets", () => {
    const cases: [string, string][] = [
      ['8.8.8.8', '8.8.8.8:53'],
      ['8.8.8.8:', '8.8.8.8:53'],
      ['8.8.8.8:5353', '8.8.8.8:5353'],
      ['[2001:db8::1]', '[2001:db8::1]:53'],
      ['[2001:db8::1]:', '[2001:db8::1]:53'],
      ['[2001:db8::1]:5353', '[2001:db8::1]:5353'],
      ['nameserver.com', 'nameserver.com:53'],
      ['nameserver.com:5353', 'nameserver.com:5353'],
      ['  10.0.0.1:54  ', '10.0.0.1:54'],
    ];
    for (const [input, want] of cases) {
      assert.equal(formatNameserver(parseRFC2136Nameserver(input)), want, input);
    }
  });

  it('names what is wrong with a bad rfc2136 nameserver', () => {
    assert.throws(() => parseRFC2136Nameserver(''), /RFC2136 nameserver missing/);
    assert.throws(() => parseRFC2136Nameserver('   '), /RFC2136 nameserver missing/);
    assert.throws(() => parseRFC2136Nameserver(':53'), /RFC2136 nameserver has no host defined, :53/);
    assert.throws(
      () => parseRFC2136Nameserver('2001:db8::1'),
      /RFC2136 nameserver is invalid: .*too many colons/,
    );
    assert.throws(
      () => parseRFC2136Nameserver('[2001:db8::1'),
      /RFC2136 nameserver is invalid: .*missing '\]'/,
    );
    assert.throws(
      () => parseRFC2136Nameserver('1.2.3.4:dns'),
      /RFC2136 nameserver 1\.2\.3\.4:dns is invalid: "dns" is not a port from 1 to 65535/,
    );
    assert.throws(() => parseRFC2136Nameserver('1.2.3.4:70000'), /"70000" is not a port from 1 to 65535/);
  });

  it('reads --dns01-recursive-nameservers entries: host:port with the port required, or https:// DoH', () => {
    assert.deepEqual(parseCheckNameserver('8.8.8.8:53'), { kind: 'dns', host: '8.8.8.8', port: 53 });
    assert.deepEqual(parseCheckNameserver('[2001:4860:4860::8888]:53'), {
      kind: 'dns',
      host: '2001:4860:4860::8888',
      port: 53,
    });
    assert.deepEqual(parseCheckNameserver('https://1.1.1.1/dns-query'), {
      kind: 'https',
      url: 'https://1.1.1.1/dns-query',
    });
    assert.throws(
      () => parseCheckNameserver('8.8.8.8'),
      /8\.8\.8\.8: must be in the format <ip address>:<port>/,
    );
    assert.throws(() => parseCheckNameserver('https://'), /must be in the format https:\/\/<DoH RFC 8484/);
    // Go's SplitHostPort lets this through (port "//1.1.1.1/dns-query"); certkit refuses the port.
    assert.throws(() => parseCheckNameserver('http://1.1.1.1/dns-query'), /is not a port from 1 to 65535/);
  });

  it("falls back to the system's resolvers, each with a port", () => {
    const servers = systemNameservers();
    assert.ok(servers.length > 0);
    for (const server of servers) {
      assert.equal(server.kind, 'dns');
      if (server.kind === 'dns') assert.ok(server.port > 0 && server.host !== '');
    }
  });
});
