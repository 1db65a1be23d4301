import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nsupdateVectors } from '@certkit/testenv/dns/nsupdate-vectors';
import { updateMessage } from './rfc2136.ts';
import {
  decodeMessage,
  DnsWireError,
  ednsRecord,
  encodeMessage,
  encodeName,
  Opcode,
  RRClass,
  RRType,
  rcodeName,
  txtData,
} from './wire.ts';

const vectors = nsupdateVectors;

describe('DNS wire format', () => {
  it('encodes names as labels ending in the root, with or without the trailing dot', () => {
    assert.equal(encodeName('example.test.').toString('hex'), '076578616d706c650474657374' + '00');
    assert.deepEqual(encodeName('example.test'), encodeName('example.test.'));
    assert.equal(encodeName('.').toString('hex'), '00');
  });

  it('refuses empty labels, labels over 63 bytes and names over 255 bytes', () => {
    assert.throws(() => encodeName('a..test.'), DnsWireError);
    assert.throws(() => encodeName(`${'a'.repeat(64)}.test.`), /longer than 63/);
    assert.throws(() => encodeName(`${Array.from({ length: 50 }, () => 'abcde').join('.')}.`), /255/);
  });

  it('writes an UPDATE that adds a TXT value byte for byte as nsupdate does', () => {
    for (const vector of vectors) {
      const sent = Buffer.from(vector.request, 'hex');
      const decoded = decodeMessage(sent);
      // nsupdate's message without its TSIG record, ARCOUNT back to 0.
      const unsigned = Buffer.from(sent.subarray(0, decoded.additionals[0].offset));
      unsigned.writeUInt16BE(0, 10);
      const ours = updateMessage(
        {
          zone: 'example.test.',
          fqdn: '_acme-challenge.vector.example.test.',
          value: `nsupdate-${vector.algorithm}`,
          action: 'add',
        },
        decoded.id,
      );
      assert.equal(ours.toString('hex'), unsigned.toString('hex'), vector.algorithm);
    }
  });

  it('writes a delete of exactly one value as class NONE, TTL 0, same data (RFC 2136 §2.5.4)', () => {
    const message = updateMessage(
      { zone: 'example.test', fqdn: '_acme-challenge.www.example.test', value: 'k', action: 'delete' },
      0x1234,
    );
    const decoded = decodeMessage(message);
    assert.equal(decoded.opcode, Opcode.UPDATE);
    assert.deepEqual(decoded.questions, [{ name: 'example.test.', type: RRType.SOA, class: RRClass.IN }]);
    assert.equal(decoded.answers.length, 0, 'no prerequisites');
    assert.equal(decoded.authorities.length, 1);
    const [rr] = decoded.authorities;
    assert.equal(rr.name, '_acme-challenge.www.example.test.');
    assert.equal(rr.type, RRType.TXT);
    assert.equal(rr.class, RRClass.NONE);
    assert.equal(rr.ttl, 0);
    assert.deepEqual(rr.texts, ['k']);
    const add = decodeMessage(
      updateMessage(
        { zone: 'example.test', fqdn: '_acme-challenge.www.example.test', value: 'k', action: 'add' },
        1,
      ),
    ).authorities[0];
    assert.equal(add.class, RRClass.IN);
    assert.equal(add.ttl, 60);
  });

  it('splits TXT values longer than 255 bytes into several character-strings', () => {
    const long = 'x'.repeat(300);
    const data = txtData(long);
    assert.equal(data[0], 255);
    assert.equal(data[256], 45);
    assert.equal(data.length, 302);
    assert.deepEqual(txtData('').toString('hex'), '00');
  });

  it('decodes compressed names, SOA, NS, CNAME and TXT answers', () => {
    // A reply built by hand: the question's name at offset 12, answers pointing back at it (0xc00c).
    const parts = [
      Buffer.from('abcd85800001000400000000', 'hex'),
      encodeName('example.test.'),
      Buffer.from('00060001', 'hex'),
    ];
    const rr = (type: number, data: Buffer, ttl = 300): Buffer => {
      const fixed = Buffer.alloc(10);
      fixed.writeUInt16BE(type, 0);
      fixed.writeUInt16BE(1, 2);
      fixed.writeUInt32BE(ttl, 4);
      fixed.writeUInt16BE(data.length, 8);
      return Buffer.concat([Buffer.from('c00c', 'hex'), fixed, data]);
    };
    const soaData = Buffer.concat([
      Buffer.from('036e7331', 'hex'),
      Buffer.from('c00c', 'hex'), // ns1.<pointer to example.test.>
      Buffer.from('0a686f73746d6173746572c00c', 'hex'),
      Buffer.from('00000001000000020000000300000004' + '00000005', 'hex'),
    ]);
    parts.push(rr(RRType.SOA, soaData, 60));
    parts.push(rr(RRType.NS, Buffer.from('036e7332c00c', 'hex')));
    parts.push(rr(RRType.CNAME, Buffer.from('0474617267c00c', 'hex')));
    parts.push(rr(RRType.TXT, Buffer.from('0361626303646566', 'hex')));
    const decoded = decodeMessage(Buffer.concat(parts));
    assert.equal(decoded.id, 0xabcd);
    assert.equal(decoded.qr, true);
    assert.equal(decoded.aa, true);
    assert.equal(decoded.rd, true);
    assert.equal(decoded.ra, true);
    assert.equal(decoded.rcode, 0);
    const [soa, ns, cname, txt] = decoded.answers;
    assert.equal(soa.name, 'example.test.');
    assert.equal(soa.ttl, 60);
    assert.deepEqual(soa.soa, {
      mname: 'ns1.example.test.',
      rname: 'hostmaster.example.test.',
      serial: 1,
      refresh: 2,
      retry: 3,
      expire: 4,
      minimum: 5,
    });
    assert.equal(ns.target, 'ns2.example.test.');
    assert.equal(cname.target, 'targ.example.test.');
    assert.deepEqual(txt.texts, ['abc', 'def']);
  });

  it('rejects compression loops, truncation and records running past the end', () => {
    const loop = Buffer.concat([
      Buffer.from('000081800001000000000000', 'hex'),
      Buffer.from('c00c00010001', 'hex'),
    ]);
    assert.throws(() => decodeMessage(loop), /compression pointer loop/);
    assert.throws(() => decodeMessage(Buffer.alloc(5)), /shorter than a header/);
    const query = encodeMessage({
      id: 1,
      questions: [{ name: 'a.test.', type: RRType.TXT, class: RRClass.IN }],
    });
    assert.throws(() => decodeMessage(query.subarray(0, query.length - 2)), DnsWireError);
    const withRecord = encodeMessage({
      id: 1,
      answers: [{ name: 'a.test.', type: RRType.TXT, class: RRClass.IN, ttl: 1, data: txtData('abc') }],
    });
    assert.throws(() => decodeMessage(withRecord.subarray(0, withRecord.length - 1)), /runs past the end/);
  });

  it('sends queries with RD and an EDNS0 OPT of 4096 bytes, and reads the extended RCODE', () => {
    const query = decodeMessage(
      encodeMessage({
        id: 7,
        rd: true,
        questions: [{ name: 'a.test.', type: RRType.SOA, class: RRClass.IN }],
        additionals: [ednsRecord(4096)],
      }),
    );
    assert.equal(query.rd, true);
    assert.equal(query.opcode, Opcode.QUERY);
    assert.equal(query.additionals[0].type, RRType.OPT);
    assert.equal(query.additionals[0].class, 4096);
    // An OPT TTL with extended RCODE 1 and header RCODE 0 means RCODE 16 (BADSIG/BADVERS).
    const reply = encodeMessage({
      id: 7,
      additionals: [{ name: '.', type: RRType.OPT, class: 4096, ttl: 0x01000000, data: Buffer.alloc(0) }],
    });
    assert.equal(rcodeName(decodeMessage(reply).rcode), 'BADSIG');
    assert.equal(rcodeName(9), 'NOTAUTH');
    assert.equal(rcodeName(99), 'RCODE99');
  });
});
