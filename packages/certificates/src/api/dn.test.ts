import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attributeOid, parseDN } from './dn.ts';

describe('parseDN (go-ldap ParseDN)', () => {
  it('reads RDNs in written order, with multi-valued RDNs', () => {
    assert.deepEqual(parseDN('CN=foo,OU=a+OU=b,O=Acme'), [
      [{ type: 'CN', value: 'foo' }],
      [
        { type: 'OU', value: 'a' },
        { type: 'OU', value: 'b' },
      ],
      [{ type: 'O', value: 'Acme' }],
    ]);
  });

  it('unescapes specials, hex pairs (as UTF-8) and keeps escaped trailing spaces', () => {
    assert.deepEqual(parseDN('CN=James \\"Jim\\" Smith\\, III'), [
      [{ type: 'CN', value: 'James "Jim" Smith, III' }],
    ]);
    assert.deepEqual(parseDN('CN=Lu\\C4\\8Di\\C4\\87'), [[{ type: 'CN', value: 'Lučić' }]]);
    assert.deepEqual(parseDN(' CN = spaced\\  '), [[{ type: 'CN', value: 'spaced ' }]]);
  });

  it('decodes #-prefixed BER values', () => {
    // 0x0c = UTF8String, length 3, "abc".
    assert.deepEqual(parseDN('1.3.6.1.4.1.1466.0=#0c03616263'), [
      [{ type: '1.3.6.1.4.1.1466.0', value: 'abc' }],
    ]);
  });

  it('treats a blank string as an empty DN', () => {
    assert.deepEqual(parseDN('  '), []);
  });

  const errors: [string, string][] = [
    ['*', 'DN ended with incomplete type, value pair'],
    ['DC=example,=net', 'DN ended with incomplete type, value pair'],
    ['test,DC=example,DC=com', 'incomplete type, value pair'],
    ['cn=Jim\\0Test', "failed to decode escaped character: encoding/hex: invalid byte: U+0054 'T'"],
    ['1=#0402486', 'failed to decode BER encoding: encoding/hex: odd length hex string'],
    ['CN=a"b', "got unescaped character: '\"'"],
    ['CN=a\\', "got corrupted escaped character: 'a\\'"],
  ];
  for (const [dn, message] of errors) {
    it(`rejects ${dn}`, () => assert.throws(() => parseDN(dn), { message }));
  }
});

describe('attributeOid', () => {
  it('knows cert-manager’s short names, case-sensitively, and dotted OIDs', () => {
    assert.equal(attributeOid('CN'), '2.5.4.3');
    assert.equal(attributeOid('DC'), '0.9.2342.19200300.100.1.25');
    assert.equal(attributeOid('2.5.4.3'), '2.5.4.3');
    assert.equal(attributeOid('cn'), undefined);
    assert.equal(attributeOid('B'), undefined);
    assert.equal(attributeOid('toString'), undefined);
  });
});
