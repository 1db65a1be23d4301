import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sequence, setOf, oid, tlv, Tag } from './der.ts';
import {
  decodeRdnSequence,
  distinguishedName,
  encodeRdnSequence,
  formatRdnSequence,
  NameOid,
  parseLiteralSubject,
  subjectRdnSequence,
} from './names.ts';

describe('names', () => {
  it('leaves out empty subject fields', () => {
    assert.deepEqual(subjectRdnSequence('', { organizations: [], serialNumber: '' }), []);
    assert.ok(encodeRdnSequence([]).equals(Buffer.from([0x30, 0x00])));
  });

  it('formats names as RFC 4514 strings that parse back to the same DER', () => {
    const tricky = [
      'CN=James \\"Jim\\" Smith\\, III,UID=jamessmith,DC=net,O=Acme',
      'CN=\\#hash\\, \\+plus \\;semi \\<lt\\> \\\\back,O=a=b',
      'CN=\\ padded\\ ,O=Zürich',
      'CN=a+OU=b,2.5.4.17=12345',
    ];
    for (const literal of tricky) {
      const rdns = parseLiteralSubject(literal);
      const formatted = formatRdnSequence(rdns);
      assert.ok(
        encodeRdnSequence(parseLiteralSubject(formatted)).equals(encodeRdnSequence(rdns)),
        `${literal} → ${formatted}`,
      );
    }
    assert.equal(formatRdnSequence(parseLiteralSubject('CN=x,O=y')), 'CN=x,O=y');
  });

  it('reads names as pkix.Name does: the last CN wins, non-string values are skipped', () => {
    const der = sequence(
      setOf(sequence(oid(NameOid.commonName), tlv(Tag.PRINTABLE_STRING, Buffer.from('first')))),
      setOf(
        sequence(
          oid(NameOid.organization),
          tlv(Tag.BMP_STRING, Buffer.from('\u0000A\u0000c\u0000m\u0000e', 'latin1')),
        ),
      ),
      setOf(sequence(oid(NameOid.organization), tlv(Tag.OCTET_STRING, Buffer.from('raw')))),
      setOf(sequence(oid(NameOid.commonName), tlv(Tag.UTF8_STRING, Buffer.from('last')))),
    );
    const rdns = decodeRdnSequence(der);
    const name = distinguishedName(rdns);
    assert.equal(name.commonName, 'last');
    assert.deepEqual(name.organizations, ['Acme']);
    assert.equal(rdns[2][0].value, '#0403726177');
  });
});
