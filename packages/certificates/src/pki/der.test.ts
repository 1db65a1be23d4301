import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeOid,
  decodeTime,
  encodeOidValue,
  encodeTime,
  isValidOid,
  oid,
  readChildren,
  readOne,
  readTlv,
  sequence,
  setOf,
  Tag,
  tlv,
  unsignedInteger,
} from './der.ts';

describe('der', () => {
  it('round-trips OIDs, including arcs beyond 2^53', () => {
    for (const text of [
      '2.5.4.3',
      '1.3.6.1.4.1.311.20.2.3',
      '0.9.2342.19200300.100.1.25',
      '2.999.1',
      '2.25.329800735698586629295641978511506172918',
    ]) {
      assert.equal(decodeOid(readOne(oid(text), Tag.OID).value), text);
    }
    assert.equal(oid('2.5.4.3').toString('hex'), '0603550403');
    assert.equal(isValidOid('3.1'), false);
    assert.equal(isValidOid('1.40'), false);
    assert.equal(isValidOid('1'), false);
    assert.equal(isValidOid('1.-2'), false);
    assert.throws(() => oid('1.2.x'), /invalid object identifier/);
  });

  it('writes short and long lengths and reads them back', () => {
    for (const size of [0, 1, 127, 128, 255, 256, 70000]) {
      const element = tlv(Tag.OCTET_STRING, Buffer.alloc(size, 7));
      const read = readOne(element, Tag.OCTET_STRING);
      assert.equal(read.value.length, size);
      assert.equal(read.raw.length, element.length);
    }
  });

  it('writes each element as identifier, minimal length and contents in order, whatever the length', () => {
    for (const size of [0, 1, 127, 128, 255, 256, 65535, 65536, 70000, 2 ** 24]) {
      const parts = [Buffer.alloc(size >> 1, 1), Buffer.alloc(size - (size >> 1), 2)];
      const element = tlv(Tag.OCTET_STRING, ...parts);
      const lengthBytes = size < 0x80 ? [size] : [];
      if (size >= 0x80) {
        for (let n = size; n > 0; n = Math.floor(n / 256)) lengthBytes.unshift(n & 0xff);
        lengthBytes.unshift(0x80 | lengthBytes.length);
      }
      assert.deepEqual(
        element.subarray(0, 1 + lengthBytes.length),
        Buffer.from([Tag.OCTET_STRING, ...lengthBytes]),
      );
      assert.deepEqual(element.subarray(1 + lengthBytes.length), Buffer.concat(parts), `size ${size}`);
    }
    assert.equal(tlv(Tag.SEQUENCE).toString('hex'), '3000');
  });

  it('reads arcs as numbers up to 2^53 and as BigInts past it, with the same text', () => {
    for (const text of [
      `1.2.${2 ** 46 - 1}`,
      `1.2.${2 ** 46}`,
      `1.2.${2 ** 53 - 1}`,
      `1.2.${2n ** 53n + 1n}`,
      `2.${2 ** 47}.7`,
      '2.25.329800735698586629295641978511506172918',
    ]) {
      assert.equal(decodeOid(encodeOidValue(text)), text);
    }
  });

  it('hands out the same encoding of an OID again without changing it', () => {
    const first = encodeOidValue('1.3.6.1.5.5.7.3.1');
    assert.equal(encodeOidValue('1.3.6.1.5.5.7.3.1'), first);
    assert.equal(first.toString('hex'), '2b06010505070301');
    assert.throws(() => encodeOidValue('1.2.x'), /invalid object identifier/);
  });

  it('encodes INTEGERs minimally and positive', () => {
    assert.equal(unsignedInteger(Buffer.from([0x00, 0x00, 0x7f])).toString('hex'), '02017f');
    assert.equal(unsignedInteger(Buffer.from([0x80])).toString('hex'), '02020080');
    assert.equal(unsignedInteger(Buffer.alloc(0)).toString('hex'), '020100');
  });

  it('sorts SET OF members by encoding', () => {
    const set = setOf(sequence(oid('2.5.4.10')), sequence(oid('2.5.4.3')));
    assert.deepEqual(
      readChildren(readOne(set, Tag.SET).value).map((c) => c.raw.toString('hex')),
      ['30050603550403', '3005060355040a'],
    );
  });

  it('rejects what DER forbids or what is truncated', () => {
    assert.throws(() => readTlv(Buffer.from([0x30, 0x80, 0x00, 0x00])), /indefinite length/);
    assert.throws(() => readTlv(Buffer.from([0x30, 0x05, 0x00])), /runs past the end/);
    assert.throws(() => readTlv(Buffer.from([0x1f, 0x01, 0x00])), /high tag numbers/);
    assert.throws(() => readOne(Buffer.from([0x05, 0x00, 0x00])), /trailing data/);
    assert.throws(() => readOne(Buffer.from([0x05, 0x00]), Tag.SEQUENCE), /expected tag 0x30/);
  });

  it('writes UTCTime for 1950–2049 and GeneralizedTime otherwise, in whole seconds, and reads both back', () => {
    const cases: [string, number, string][] = [
      ['1950-01-01T00:00:00.000Z', Tag.UTC_TIME, '500101000000Z'],
      ['2026-03-01T12:34:56.789Z', Tag.UTC_TIME, '260301123456Z'],
      ['2049-12-31T23:59:59.999Z', Tag.UTC_TIME, '491231235959Z'],
      ['2050-01-01T00:00:00.000Z', Tag.GENERALIZED_TIME, '20500101000000Z'],
      ['1949-12-31T23:59:59.000Z', Tag.GENERALIZED_TIME, '19491231235959Z'],
      ['9999-12-31T23:59:59.000Z', Tag.GENERALIZED_TIME, '99991231235959Z'],
      ['0001-02-03T04:05:06.000Z', Tag.GENERALIZED_TIME, '00010203040506Z'],
    ];
    for (const [iso, tag, text] of cases) {
      const element = readOne(encodeTime(new Date(iso)), tag);
      assert.equal(element.value.toString('latin1'), text, iso);
      assert.equal(decodeTime(element).toISOString(), iso.replace(/\.\d{3}Z$/, '.000Z'));
    }
    assert.throws(() => encodeTime(new Date('+010000-01-01T00:00:00Z')), /cannot encode/);
    assert.throws(() => encodeTime(new Date(NaN)), /cannot encode/);
  });
});
