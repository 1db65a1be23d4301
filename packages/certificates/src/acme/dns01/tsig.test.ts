import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { type NsupdateVector, nsupdateVectors } from '@certkit/testenv/dns/nsupdate-vectors';
import { RFC2136_TSIG_ALGORITHMS } from '../../api/acme-constants.ts';
import {
  decodeTsigSecret,
  signMessage,
  tsigAlgorithm,
  TsigError,
  type TsigKey,
  TSIG_ALGORITHMS,
  verifyResponse,
} from './tsig.ts';
import { decodeMessage, encodeMessage, encodeName, encodeRecord, RRClass, RRType, tsigData } from './wire.ts';

const vectors = nsupdateVectors;

function keyOf(vector: NsupdateVector): TsigKey {
  return {
    name: vector.keyName,
    algorithm: tsigAlgorithm(vector.algorithm),
    secret: decodeTsigSecret(vector.secret),
  };
}

/** The captured request without its TSIG record, its MAC and its time. */
function unsignedRequest(vector: NsupdateVector): {
  unsigned: Buffer;
  mac: Buffer;
  timeSigned: number;
  fudge: number;
} {
  const sent = Buffer.from(vector.request, 'hex');
  const decoded = decodeMessage(sent);
  const tsigRecord = decoded.additionals.at(-1)!;
  const unsigned = Buffer.from(sent.subarray(0, tsigRecord.offset));
  unsigned.writeUInt16BE(decoded.additionals.length - 1, 10);
  return {
    unsigned,
    mac: tsigRecord.tsig!.mac,
    timeSigned: tsigRecord.tsig!.timeSigned,
    fudge: tsigRecord.tsig!.fudge,
  };
}

describe('TSIG', () => {
  it('has the captured vectors of four algorithms', () => {
    assert.deepEqual(
      vectors.map((v) => v.algorithm),
      ['HMACMD5', 'HMACSHA1', 'HMACSHA256', 'HMACSHA512'],
    );
  });

  for (const vector of vectors) {
    it(`signs an UPDATE exactly as nsupdate does (${vector.algorithm})`, () => {
      const { unsigned, timeSigned, fudge } = unsignedRequest(vector);
      const signed = signMessage(unsigned, keyOf(vector), { timeSigned, fudge });
      assert.equal(signed.message.toString('hex'), vector.request);
    });

    it(`verifies BIND's signed answer (${vector.algorithm})`, () => {
      const { mac, timeSigned } = unsignedRequest(vector);
      const raw = Buffer.from(vector.response, 'hex');
      const response = decodeMessage(raw);
      assert.equal(response.rcode, 0);
      verifyResponse(raw, response, keyOf(vector), mac, timeSigned + 10);
    });

    it(`rejects BIND's answer when a byte changed, under another key, or outside the fudge (${vector.algorithm})`, () => {
      const { mac, timeSigned } = unsignedRequest(vector);
      const raw = Buffer.from(vector.response, 'hex');
      const tampered = Buffer.from(raw);
      tampered[3] ^= 0x01; // the RCODE bits
      assert.throws(
        () => verifyResponse(tampered, decodeMessage(tampered), keyOf(vector), mac, timeSigned),
        /MAC does not verify/,
      );
      const otherKey = { ...keyOf(vector), secret: Buffer.alloc(32, 7) };
      assert.throws(
        () => verifyResponse(raw, decodeMessage(raw), otherKey, mac, timeSigned),
        /MAC does not verify/,
      );
      const otherMac = Buffer.from(mac);
      otherMac[0] ^= 0xff;
      assert.throws(
        () => verifyResponse(raw, decodeMessage(raw), keyOf(vector), otherMac, timeSigned),
        TsigError,
      );
      assert.throws(
        () => verifyResponse(raw, decodeMessage(raw), keyOf(vector), mac, timeSigned + 301),
        /more than 300 s from ours/,
      );
    });
  }

  it('verifies an answer signed over the request MAC, the answer and the TSIG variables (RFC 8945 §5.3)', () => {
    const key: TsigKey = {
      name: 'Self.Test',
      algorithm: tsigAlgorithm('hmacsha384'),
      secret: Buffer.from('secret'),
    };
    const query = encodeMessage({
      id: 42,
      questions: [{ name: 'a.test.', type: RRType.SOA, class: RRClass.IN }],
    });
    const request = signMessage(query, key, { timeSigned: 1_700_000_000 });
    // The server's side, written out from the RFC: MAC over request MAC size and MAC, the answer without TSIG,
    // then the variables (key name in lower case, class ANY, TTL 0, algorithm, time, fudge, error, other).
    const answer = Buffer.from(query);
    answer.writeUInt16BE(0x8400, 2);
    const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);
    const time = Buffer.alloc(6);
    time.writeUIntBE(1_700_000_001, 0, 6);
    const mac = createHmac('sha384', 'secret')
      .update(Buffer.concat([u16(request.mac.length), request.mac, answer]))
      .update(
        Buffer.concat([encodeName('self.test.'), u16(255), Buffer.alloc(4), encodeName('hmac-sha384.')]),
      )
      .update(Buffer.concat([time, u16(300), u16(0), u16(0)]))
      .digest();
    const tsigRecord = {
      name: 'Self.Test.',
      type: RRType.TSIG,
      class: RRClass.ANY,
      ttl: 0,
      data: tsigData({
        algorithm: 'hmac-sha384.',
        timeSigned: 1_700_000_001,
        fudge: 300,
        mac,
        originalId: 42,
        error: 0,
        other: Buffer.alloc(0),
      }),
    };
    const raw = Buffer.concat([answer, encodeRecord(tsigRecord)]);
    raw.writeUInt16BE(1, 10);
    verifyResponse(raw, decodeMessage(raw), key, request.mac, 1_700_000_002);
    // The key name is case-insensitive; the algorithm must be the key's.
    verifyResponse(raw, decodeMessage(raw), { ...key, name: 'self.test.' }, request.mac, 1_700_000_002);
    assert.throws(
      () =>
        verifyResponse(
          raw,
          decodeMessage(raw),
          { ...key, algorithm: tsigAlgorithm('HMACSHA512') },
          request.mac,
          1_700_000_002,
        ),
      /not Self\.Test\. \(hmac-sha512\.\)/,
    );
    // A forwarder may change the ID: the MAC covers the original one.
    const renumbered = Buffer.from(raw);
    renumbered.writeUInt16BE(4242, 0);
    verifyResponse(renumbered, decodeMessage(renumbered), key, request.mac, 1_700_000_002);
  });

  it('reports an unsigned answer and a TSIG error the server sent', () => {
    const key: TsigKey = { name: 'k', algorithm: tsigAlgorithm('HMACSHA256'), secret: Buffer.from('s') };
    const plain = encodeMessage({ id: 1 });
    assert.throws(
      () => verifyResponse(plain, decodeMessage(plain), key, Buffer.alloc(32)),
      /not signed with TSIG key k\./,
    );
    const badSig = encodeMessage({
      id: 1,
      additionals: [
        {
          name: 'k.',
          type: RRType.TSIG,
          class: RRClass.ANY,
          ttl: 0,
          data: tsigData({
            algorithm: 'hmac-sha256.',
            timeSigned: 1,
            fudge: 300,
            mac: Buffer.alloc(0),
            originalId: 1,
            error: 16,
            other: Buffer.alloc(0),
          }),
        },
      ],
    });
    assert.throws(
      () => verifyResponse(badSig, decodeMessage(badSig), key, Buffer.alloc(32)),
      /rejected the TSIG signature: BADSIG/,
    );
  });

  it("takes cert-manager's algorithm names case-insensitively, HMACMD5 by default", () => {
    assert.equal(tsigAlgorithm(undefined), TSIG_ALGORITHMS.HMACMD5);
    assert.equal(tsigAlgorithm(''), TSIG_ALGORITHMS.HMACMD5);
    assert.equal(tsigAlgorithm('hmacsha256').wireName, 'hmac-sha256.');
    assert.equal(tsigAlgorithm('HMACSHA512').hash, 'sha512');
    assert.throws(
      () => tsigAlgorithm('HMAC-SHA256'),
      /TSIG algorithm 'HMAC-SHA256' is not supported \(supported: HMACMD5/,
    );
  });

  it('signs with every algorithm admission accepts, plus exactly HMACSHA224 and HMACSHA384', () => {
    for (const name of RFC2136_TSIG_ALGORITHMS) assert.equal(tsigAlgorithm(name), TSIG_ALGORITHMS[name]);
    const beyondAdmission = Object.keys(TSIG_ALGORITHMS).filter(
      (name) => !(RFC2136_TSIG_ALGORITHMS as readonly string[]).includes(name),
    );
    assert.deepEqual(beyondAdmission, ['HMACSHA224', 'HMACSHA384']);
  });

  it('decodes the base64 secret, ignoring surrounding whitespace, and refuses anything else', () => {
    assert.deepEqual(decodeTsigSecret('c2VjcmV0\n'), Buffer.from('secret'));
    assert.throws(() => decodeTsigSecret('not base64!'), /not standard base64/);
    assert.throws(() => decodeTsigSecret('c2VjcmV0-_'), /not standard base64/);
    assert.throws(() => decodeTsigSecret(''), /not standard base64/);
  });
});
