/**
 * RC2 (RFC 2268) encryption in CBC mode, for PKCS#12's pbeWithSHAAnd40BitRC2-CBC: go-pkcs12's LegacyRC2
 * profile (cert-manager's default) encrypts the certificates with it. node:crypto reaches RC2 only through
 * OpenSSL's legacy provider, which Node does not load, so the cipher is written out here. Only encryption is
 * needed: certkit writes keystores and never reads them.
 */

/** RFC 2268 §2: a permutation of 0..255 derived from the digits of pi. */
const PITABLE = Buffer.from(
  'd978f9c419ddb5ed28e9fd794aa0d89d' +
    'c67e37832b76538e624c6488448bfba2' +
    '179a59f587b34f1361456d8d09817d32' +
    'bd8f40eb86b77b0bf09521225c6b4e82' +
    '54d66593ce60b21c7356c014a78cf1dc' +
    '1275ca1f3bbee4d1423dd430a33cb626' +
    '6fbf0eda4669075727f21d9bbc944303' +
    'f811c7f690ef3ee706c3d52fc8661ed7' +
    '08e8eade8052eef784aa72ac354d6a2a' +
    '961ad2715a1549744b9fd05e0418a4ec' +
    'c2e0416e0f51cbcc2491af50a1f47039' +
    '997c3a8523b8b47afc02365b25559731' +
    '2d5dfa98e38a92ae05df2910676cbac9' +
    'd300e6cfe19ea82c6316013f58e289a9' +
    '0d38341bab33ffb0bb480c5fb9b1cd2e' +
    'c5f3db47e5a59c770aa62068fe7fc1ad',
  'hex',
);

/** Rotation amounts of the four 16-bit words in a mix step (RFC 2268 §3.1). */
const SHIFTS = [1, 2, 3, 5];

/** Key expansion (RFC 2268 §2): 64 little-endian 16-bit subkeys; `effectiveBits` is T1. */
export function rc2ExpandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  const T = key.length;
  if (T < 1 || T > 128) throw new Error(`rc2: key length ${T} is outside 1..128 bytes`);
  if (effectiveBits < 1 || effectiveBits > 1024) throw new Error(`rc2: effective key bits ${effectiveBits}`);
  const L = new Uint8Array(128);
  L.set(key);
  for (let i = T; i < 128; i++) L[i] = PITABLE[(L[i - 1] + L[i - T]) & 0xff];
  // Reduce the expanded key to T1 effective bits: T8 bytes, the top one masked by TM.
  const T8 = Math.ceil(effectiveBits / 8);
  const TM = 0xff >> (8 * T8 - effectiveBits);
  L[128 - T8] = PITABLE[L[128 - T8] & TM];
  for (let i = 127 - T8; i >= 0; i--) L[i] = PITABLE[L[i + 1] ^ L[i + T8]];
  const K = new Uint16Array(64);
  for (let i = 0; i < 64; i++) K[i] = L[2 * i] | (L[2 * i + 1] << 8);
  return K;
}

/** Encrypts the 8-byte block at `offset` in place (RFC 2268 §3): 5 mixes, a mash, 6 mixes, a mash, 5 mixes. */
function encryptBlockInPlace(K: Uint16Array, data: Uint8Array, offset: number): void {
  const R = [0, 1, 2, 3].map((w) => data[offset + 2 * w] | (data[offset + 2 * w + 1] << 8));
  let j = 0;
  const mixRound = () => {
    for (let i = 0; i < 4; i++) {
      // R[i-1] selects, bit by bit, between R[i-2] (where it is 1) and R[i-3] (where it is 0).
      const prev = R[(i + 3) & 3];
      const sum = (R[i] + K[j++] + (prev & R[(i + 2) & 3]) + (~prev & R[(i + 1) & 3])) & 0xffff;
      R[i] = ((sum << SHIFTS[i]) | (sum >> (16 - SHIFTS[i]))) & 0xffff;
    }
  };
  const mashRound = () => {
    for (let i = 0; i < 4; i++) R[i] = (R[i] + K[R[(i + 3) & 3] & 63]) & 0xffff;
  };
  for (const [rounds, mash] of [
    [5, true],
    [6, true],
    [5, false],
  ] as const) {
    for (let round = 0; round < rounds; round++) mixRound();
    if (mash) mashRound();
  }
  for (let w = 0; w < 4; w++) {
    data[offset + 2 * w] = R[w] & 0xff;
    data[offset + 2 * w + 1] = R[w] >> 8;
  }
}

/** One block in ECB, for RFC 2268's test vectors. */
export function rc2EncryptBlock(key: Uint8Array, effectiveBits: number, block: Uint8Array): Buffer {
  if (block.length !== 8) throw new Error('rc2: a block is 8 bytes');
  const out = Buffer.from(block);
  encryptBlockInPlace(rc2ExpandKey(key, effectiveBits), out, 0);
  return out;
}

/** RC2-CBC with PKCS#7 padding (always at least one byte, as PKCS#5/#12 require). */
export function rc2CbcEncrypt(
  key: Uint8Array,
  effectiveBits: number,
  iv: Uint8Array,
  plaintext: Uint8Array,
): Buffer {
  if (iv.length !== 8) throw new Error('rc2: the IV is 8 bytes');
  const K = rc2ExpandKey(key, effectiveBits);
  const pad = 8 - (plaintext.length % 8);
  const out = Buffer.concat([plaintext, Buffer.alloc(pad, pad)]);
  for (let offset = 0; offset < out.length; offset += 8) {
    const chain = offset === 0 ? iv : out.subarray(offset - 8, offset);
    for (let k = 0; k < 8; k++) out[offset + k] ^= chain[k];
    encryptBlockInPlace(K, out, offset);
  }
  return out;
}
