/** cert-manager's address rules (Go's net.SplitHostPort, util.ValidNameserver, util.ValidDNS01Nameserver). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  dns01NameserverError,
  joinHostPort,
  parsePort,
  portNumber,
  rfc2136Nameserver,
  splitHostPort,
} from './nameserver.ts';

describe('Go address parsing', () => {
  it('splitHostPort as net.SplitHostPort', () => {
    const rows: [string, string][] = [
      ['8.8.8.8:53', '8.8.8.8|53'],
      ['8.8.8.8:', '8.8.8.8|'],
      [':53', '|53'],
      ['[2001:db8::1]:53', '2001:db8::1|53'],
      ['ns.example.com:5353', 'ns.example.com|5353'],
      ['8.8.8.8', 'address 8.8.8.8: missing port in address'],
      ['[2001:db8::1]', 'address [2001:db8::1]: missing port in address'],
      ['2001:db8::1:53', 'address 2001:db8::1:53: too many colons in address'],
      ['[2001:db8::1]::53', 'address [2001:db8::1]::53: too many colons in address'],
      ['[::1', "address [::1: missing ']' in address"],
      ['a[b:53', "address a[b:53: unexpected '[' in address"],
      ['a]b:53', "address a]b:53: unexpected ']' in address"],
    ];
    for (const [input, want] of rows) {
      const got = splitHostPort(input);
      assert.equal('error' in got ? got.error : `${got.host}|${got.port}`, want, input);
    }
  });

  it('rfc2136Nameserver as util.ValidNameserver', () => {
    const rows: [string, string][] = [
      ['8.8.8.8', '8.8.8.8:53'],
      [' 8.8.8.8: ', '8.8.8.8:53'],
      ['8.8.8.8:5353', '8.8.8.8:5353'],
      ['[2001:db8::1]', '[2001:db8::1]:53'],
      ['[2001:db8::1]:', '[2001:db8::1]:53'],
      ['nameserver.com', 'nameserver.com:53'],
      [':53', 'error: RFC2136 nameserver has no host defined, :53'],
      ['', 'error: RFC2136 nameserver missing'],
      ['1:2:3', 'error: RFC2136 nameserver is invalid: address 1:2:3: too many colons in address'],
    ];
    for (const [input, want] of rows) {
      const got = rfc2136Nameserver(input);
      assert.equal(
        'error' in got ? `error: ${got.error}` : joinHostPort(got.host, got.port),
        want,
        JSON.stringify(input),
      );
    }
  });

  it('dns01NameserverError as util.ValidDNS01Nameserver', () => {
    assert.equal(dns01NameserverError('10.0.0.1:53'), undefined);
    assert.equal(dns01NameserverError('[::1]:53'), undefined);
    assert.equal(dns01NameserverError('https://1.1.1.1/dns-query'), undefined);
    assert.equal(dns01NameserverError('10.0.0.1'), 'must be in the format <ip address>:<port>');
    assert.equal(
      dns01NameserverError('https://'),
      'must be in the format https://<DoH RFC 8484 server address>',
    );
  });

  it('portNumber: decimal digits from the minimum to 65535', () => {
    assert.equal(portNumber('53'), 53);
    assert.equal(portNumber('65535'), 65535);
    assert.equal(portNumber('0'), undefined);
    assert.equal(portNumber('0', 0), 0);
    for (const bad of ['65536', '', 'dns', '-1', '5 3', '1e3', '000053'])
      assert.equal(portNumber(bad), undefined, bad);
  });

  it('parsePort: a port to dial (the self-check flag, the DNS-01 nameservers), else which text is not one', () => {
    assert.equal(parsePort('53'), 53);
    assert.equal(parsePort('65535'), 65535);
    for (const bad of ['0', '65536', '', 'dns', '-1'])
      assert.throws(() => parsePort(bad), {
        message: `${JSON.stringify(bad)} is not a port from 1 to 65535`,
      });
  });
});
