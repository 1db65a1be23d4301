import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIpAddress, parseIpAddress, toIPv4 } from './ip.ts';

describe('ip', () => {
  it("parses and prints addresses as Go's netip / net.IP do", () => {
    const cases: [string, string, number][] = [
      ['127.0.0.1', '127.0.0.1', 4],
      ['::1', '::1', 16],
      ['::', '::', 16],
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1', 16],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', 16],
      ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1', 16],
      ['fe80::1:2', 'fe80::1:2', 16],
      ['1::', '1::', 16],
      ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0', 16],
      ['::ffff:192.0.2.1', '192.0.2.1', 16],
      ['64:ff9b::192.0.2.33', '64:ff9b::c000:221', 16],
    ];
    for (const [input, printed, length] of cases) {
      const bytes = parseIpAddress(input);
      assert.equal(bytes.length, length, input);
      assert.equal(formatIpAddress(bytes), printed, input);
    }
    assert.equal(toIPv4(parseIpAddress('::ffff:10.0.0.1'))?.length, 4);
    assert.equal(toIPv4(parseIpAddress('::10.0.0.1')), undefined);
  });

  it('rejects what netip.ParseAddr rejects', () => {
    for (const bad of [
      '',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '256.0.0.1',
      '1.2.3.4::',
      ':::',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7:8::',
      'fe80::1%eth0',
      'example.com',
      'g::1',
      '12345::1',
    ]) {
      assert.throws(() => parseIpAddress(bad), /failed to parse IP address/, bad);
    }
  });
});
