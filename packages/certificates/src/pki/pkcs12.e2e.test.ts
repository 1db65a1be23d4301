import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { decodeCertificatePems } from './certificate-der.ts';
import { contextTag, expectTag, readChildren, readOid, readOne, sequence, Tag, type Tlv } from './der.ts';
import {
  bmpPassword,
  encodePkcs12Keystore,
  encodePkcs12Truststore,
  pbmac1Mac,
  pkcs12Kdf,
  pkcs12Mac,
  pkixNameString,
  type HashName,
  type Pkcs12Profile,
} from './pkcs12.ts';
import { encodePem } from './pem.ts';
import { rc2CbcEncrypt, rc2EncryptBlock } from './rc2.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';

// Every check here goes through a real reader (OpenSSL 3.0, Java 17's keytool) or a published test vector.
// Only a tool that cannot be started skips its checks, with the reason printed (.ci/run installs both);
// one that starts and misbehaves fails them.
function unavailable(tool: string, args: string[]): string | false {
  const error = spawnSync(tool, args).error as { code?: string } | undefined;
  return error?.code === 'ENOENT' ? `${tool} is not on PATH` : false;
}
const noOpenssl = unavailable('openssl', ['version']);
const noKeytool = noOpenssl || unavailable('keytool', ['-help']);
if (noKeytool) console.log(`# skipping the PKCS#12 checks that need it: ${noKeytool}`);

const PROFILES: readonly Pkcs12Profile[] = ['LegacyRC2', 'LegacyDES', 'Modern2023', 'Modern2026'];
/** Java 17 has no PBMAC1 (it came in Java 26), so it cannot open Modern2026 files. */
const JAVA_PROFILES: readonly Pkcs12Profile[] = ['LegacyRC2', 'LegacyDES', 'Modern2023'];
const PASSWORD = 'correct horse battery';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  localKeyId: '1.2.840.113549.1.9.21',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  pbeWithSHAAnd3KeyTripleDESCBC: '1.2.840.113549.1.12.1.3',
  pbeWithSHAAnd40BitRC2CBC: '1.2.840.113549.1.12.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbmac1: '1.2.840.113549.1.5.14',
  hmacWithSHA256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
};

const DIGEST_BY_OID: Readonly<Record<string, HashName>> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
const HMAC_BY_OID: Readonly<Record<string, HashName>> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.11': 'sha512',
};

// --- tools ------------------------------------------------------------------------------------------------

const workDir = mkdtempSync(join(tmpdir(), 'certkit-pkcs12-'));
after(() => rmSync(workDir, { recursive: true, force: true }));
let fileCount = 0;

function tempFile(contents: Buffer | string, extension = 'p12'): string {
  const path = join(workDir, `${++fileCount}.${extension}`);
  writeFileSync(path, contents);
  return path;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a tool to completion. stdout is Latin-1 unless said otherwise: byte for byte, which suits binary
 * output, and what OpenSSL 3.0 prints a BMPString friendlyName as (one byte per character).
 */
function run(
  command: string,
  args: string[],
  options: { input?: Buffer; stdout?: BufferEncoding } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, LC_ALL: 'C.UTF-8' } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString(options.stdout ?? 'latin1'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    child.stdin.end(options.input);
  });
}

/**
 * `openssl pkcs12 -info -nodes`. LegacyRC2 needs the legacy provider for RC2. OpenSSL 3.0 predates PBMAC1,
 * so for Modern2026 it is told to skip the MAC (checked below against RFC 9579's vectors instead) and only
 * decrypts.
 */
function opensslInfo(p12: Buffer, profile: Pkcs12Profile, password: string): Promise<Run> {
  const extra = profile === 'LegacyRC2' ? ['-legacy'] : profile === 'Modern2026' ? ['-nomacver'] : [];
  return run('openssl', [
    'pkcs12',
    '-info',
    '-nodes',
    '-passin',
    `pass:${password}`,
    '-in',
    tempFile(p12),
    ...extra,
  ]);
}

interface InfoBag {
  /** The lines between "Bag Attributes" and the PEM block. */
  attributes: string;
  type: string;
  der: Buffer;
}

function infoBags(stdout: string): InfoBag[] {
  return [...stdout.matchAll(/Bag Attributes(.*?)-----BEGIN ([A-Z ]+)-----\n(.*?)-----END \2-----/gs)].map(
    ([, attributes, type, body]) => ({
      attributes,
      type,
      der: Buffer.from(body.replace(/\s/g, ''), 'base64'),
    }),
  );
}

/** "localKeyID: 22 BD …" as OpenSSL prints it. */
function localKeyIdOf(bag: InfoBag): string | undefined {
  return /localKeyID: ([0-9A-F ]+)/.exec(bag.attributes)?.[1].replace(/ /g, '').toLowerCase();
}

function keytoolList(p12: Buffer, password: string): Promise<Run> {
  return run(
    'keytool',
    [
      '-J-Dfile.encoding=UTF-8',
      '-J-Dsun.stdout.encoding=UTF-8',
      '-list',
      '-v',
      '-storetype',
      'PKCS12',
      '-keystore',
      tempFile(p12),
      '-storepass',
      password,
    ],
    { stdout: 'utf8' },
  );
}

interface KeytoolEntry {
  alias: string;
  type: string;
  /** SHA-256 fingerprints of the entry's certificates, in order. */
  fingerprints: string[];
}

function keytoolEntries(stdout: string): KeytoolEntry[] {
  return stdout
    .split(/^Alias name: /m)
    .slice(1)
    .map((section) => ({
      alias: section.slice(0, section.indexOf('\n')),
      type: /^Entry type: (.*)$/m.exec(section)?.[1] ?? '',
      fingerprints: [...section.matchAll(/^\s*SHA256: ([0-9A-F:]+)$/gm)].map((match) => match[1]),
    }));
}

function javaFingerprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
}

function sha1(der: Buffer): string {
  return createHash('sha1').update(der).digest('hex');
}

function pkcs8(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'pkcs8' });
}

// --- a MAC checker: recomputes a PFX's MAC from what the file itself says --------------------------------

function integerValue(element: Tlv): number {
  return expectTag(element, Tag.INTEGER).value.reduce((n, byte) => n * 256 + byte, 0);
}

function lookup<T>(table: Readonly<Record<string, T>>, key: string): T {
  const value = table[key];
  if (value === undefined) throw new Error(`unsupported algorithm ${key}`);
  return value;
}

/** The authenticated safe's content octets: what the MAC covers. */
function authSafeOf(pfx: Buffer): { version: Tlv; authSafe: Tlv; macData: Tlv; message: Buffer } {
  const [version, authSafe, macData] = readChildren(readOne(pfx, Tag.SEQUENCE).value);
  const [contentType, content] = readChildren(expectTag(authSafe, Tag.SEQUENCE).value);
  assert.equal(readOid(contentType), OID.data);
  const message = readOne(expectTag(content, contextTag(0, true)).value, Tag.OCTET_STRING).value;
  return { version, authSafe, macData, message };
}

/**
 * Throws unless the MAC verifies under `password`: the classic PKCS#12 MAC (RFC 7292 §5) or PBMAC1 (RFC
 * 9579), whose PBKDF2 parameters must carry a keyLength (RFC 9579 §5).
 */
function checkMac(pfx: Buffer, password: string): void {
  const { version, macData, message } = authSafeOf(pfx);
  assert.equal(integerValue(version), 3);
  const [digestInfo, macSalt, iterations] = readChildren(expectTag(macData, Tag.SEQUENCE).value);
  const [algorithm, digest] = readChildren(expectTag(digestInfo, Tag.SEQUENCE).value);
  const [algorithmOid, parameters] = readChildren(expectTag(algorithm, Tag.SEQUENCE).value);
  let expected: Buffer;
  if (readOid(algorithmOid) === OID.pbmac1) {
    const [kdf, mac] = readChildren(expectTag(parameters, Tag.SEQUENCE).value);
    const [kdfOid, kdfParams] = readChildren(kdf.value);
    assert.equal(readOid(kdfOid), OID.pbkdf2);
    const [salt, count, ...optional] = readChildren(kdfParams.value);
    const keyLength = optional.find((element) => element.tag === Tag.INTEGER);
    if (!keyLength) throw new Error('PBMAC1 parameters without a keyLength');
    const prf = optional.find((element) => element.tag === Tag.SEQUENCE);
    expected = pbmac1Mac(
      {
        salt: expectTag(salt, Tag.OCTET_STRING).value,
        iterations: integerValue(count),
        keyLength: integerValue(keyLength),
        prf: prf ? lookup(HMAC_BY_OID, readOid(readChildren(prf.value)[0])) : 'sha1',
        mac: lookup(HMAC_BY_OID, readOid(readChildren(mac.value)[0])),
      },
      password,
      message,
    );
  } else {
    expected = pkcs12Mac(
      lookup(DIGEST_BY_OID, readOid(algorithmOid)),
      password,
      expectTag(macSalt, Tag.OCTET_STRING).value,
      iterations ? integerValue(iterations) : 1,
      message,
    );
  }
  if (!expected.equals(expectTag(digest, Tag.OCTET_STRING).value)) throw new Error('MAC mismatch');
}

// --- fixtures ---------------------------------------------------------------------------------------------

const KEYS: Readonly<Record<string, KeyObject>> = {
  'RSA 2048': generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
  'ECDSA P-256': generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  Ed25519: generateKeyPairSync('ed25519').privateKey,
};

function ders(pem: string): Buffer[] {
  return decodeCertificatePems(pem).map((cert) => cert.der);
}

const root = await rootCa();
const intermediate = await issue({
  spec: { commonName: 'certkit test intermediate', isCA: true },
  issuer: { certPem: root.certPem, key: root.key },
});
const [rootDer] = ders(root.certPem);
const [intermediateDer] = ders(intermediate.certPem);

/** For each key: [leaf, intermediate] as the chain, the root as the CA. */
const CHAINS: Readonly<Record<string, Buffer[]>> = Object.fromEntries(
  await Promise.all(
    Object.entries(KEYS).map(async ([name, key]) => {
      const leaf = await issue({
        spec: { commonName: `leaf ${name}`, dnsNames: ['leaf.example'] },
        key,
        issuer: { certPem: intermediate.certPem, key: intermediate.key },
      });
      return [name, ders(leaf.certPem)] as const;
    }),
  ),
);

/**
 * A CA whose subject exercises Go's pkix.Name.String: an escaped leading space and comma, a non-ASCII letter,
 * two OUs (one RDN in Go's order), and two attribute types Go has no name for, printed as `#` + DER hex.
 */
const oddCa = await issue({
  spec: {
    literalSubject:
      '1.2.840.113549.1.9.1=ops@example.com,CN=\\ Zürich#1,2.5.4.12=Boss,OU=b,OU=a,O=Acme\\, Inc.,C=US',
    isCA: true,
  },
});
const [oddCaDer] = ders(oddCa.certPem);
const ODD_CA_NAME =
  'CN=\\ Zürich#1,OU=a+OU=b,O=Acme\\, Inc.,C=US,' +
  '1.2.840.113549.1.9.1=#0c0f6f7073406578616d706c652e636f6d,2.5.4.12=#1304426f7373';

// --- RC2 --------------------------------------------------------------------------------------------------

test('RC2 matches the RFC 2268 section 5 test vectors', () => {
  const vectors: [key: string, effectiveBits: number, plaintext: string, ciphertext: string][] = [
    ['0000000000000000', 63, '0000000000000000', 'ebb773f993278eff'],
    ['ffffffffffffffff', 64, 'ffffffffffffffff', '278b27e42e2f0d49'],
    ['3000000000000000', 64, '1000000000000001', '30649edf9be7d2c2'],
    ['88', 64, '0000000000000000', '61a8a244adacccf0'],
    ['88bca90e90875a', 64, '0000000000000000', '6ccf4308974c267f'],
    ['88bca90e90875a7f0f79c384627bafb2', 64, '0000000000000000', '1a807d272bbe5db1'],
    ['88bca90e90875a7f0f79c384627bafb2', 128, '0000000000000000', '2269552ab0f85ca6'],
    [
      '88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e',
      129,
      '0000000000000000',
      '5b78d3a43dfff1f1',
    ],
  ];
  for (const [key, bits, plaintext, ciphertext] of vectors) {
    const out = rc2EncryptBlock(Buffer.from(key, 'hex'), bits, Buffer.from(plaintext, 'hex'));
    assert.equal(out.toString('hex'), ciphertext, `key ${key}, ${bits} effective bits`);
  }
});

test('RC2-40-CBC with padding matches openssl enc -rc2-40-cbc', { skip: noOpenssl }, async () => {
  // 40 effective bits from a 5-byte key is what pbeWithSHAAnd40BitRC2-CBC uses; the RFC has no such vector.
  await Promise.all(
    [0, 1, 7, 8, 9, 63, 1000].map(async (length) => {
      const key = randomBytes(5);
      const iv = randomBytes(8);
      const plaintext = randomBytes(length);
      const result = await run(
        'openssl',
        ['enc', '-rc2-40-cbc', '-provider', 'legacy', '-provider', 'default'].concat([
          '-K',
          key.toString('hex'),
          '-iv',
          iv.toString('hex'),
        ]),
        { input: plaintext },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        rc2CbcEncrypt(key, 40, iv, plaintext).toString('latin1'),
        result.stdout,
        `${length} bytes of plaintext`,
      );
    }),
  );
});

// --- the PKCS#12 KDF and MACs -----------------------------------------------------------------------------

test('passwords are BMPStrings with a NUL terminator, and characters outside the BMP are refused', () => {
  assert.equal(bmpPassword('pä€').toString('hex'), '007000e420ac0000');
  assert.equal(bmpPassword('').toString('hex'), '0000');
  assert.throws(() => bmpPassword('key 🔑'), /cannot be encoded in UCS-2/);
  assert.throws(() => encodePkcs12Truststore('LegacyDES', '🔑', [rootDer]), /cannot be encoded in UCS-2/);
});

test('the RFC 7292 appendix B KDF matches OpenSSL PKCS12KDF', { skip: noOpenssl }, async () => {
  const cases: [
    hash: HashName,
    password: string,
    saltLength: number,
    iterations: number,
    id: 1 | 2 | 3,
    size: number,
  ][] = [
    ['sha1', 'changeit', 8, 2048, 1, 24],
    ['sha1', 'changeit', 8, 2048, 2, 8],
    ['sha1', 'changeit', 8, 2048, 1, 5],
    ['sha1', '', 8, 1, 3, 20],
    ['sha1', 'pässwörd€', 20, 3, 1, 45],
    // A password longer than one 64-byte block, so that step 6C adds B + 1 to several blocks of I.
    ['sha1', 'a much longer password that spans more than one block', 7, 2, 1, 60],
    ['sha256', PASSWORD, 16, 2048, 3, 32],
    ['sha256', 'x', 16, 5, 1, 70],
    ['sha512', PASSWORD, 16, 3, 3, 64],
  ];
  await Promise.all(
    cases.map(async ([hash, password, saltLength, iterations, id, size]) => {
      const salt = randomBytes(saltLength);
      const bmp = bmpPassword(password);
      const result = await run('openssl', [
        'kdf',
        '-keylen',
        String(size),
        '-kdfopt',
        `digest:${hash.toUpperCase()}`,
        '-kdfopt',
        `hexpass:${bmp.toString('hex')}`,
        '-kdfopt',
        `hexsalt:${salt.toString('hex')}`,
        '-kdfopt',
        `iter:${iterations}`,
        '-kdfopt',
        `id:${id}`,
        'PKCS12KDF',
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        pkcs12Kdf(hash, bmp, salt, iterations, id, size).toString('hex'),
        result.stdout.replace(/[:\s]/g, '').toLowerCase(),
        `${hash} id ${id}, ${size} bytes, ${iterations} iterations`,
      );
    }),
  );
});

test(
  'the MAC checker accepts the MACs OpenSSL writes (SHA-1 and SHA-256) and only with the password',
  { skip: noOpenssl },
  async () => {
    const [leaf] = CHAINS['ECDSA P-256'];
    const keyFile = tempFile(KEYS['ECDSA P-256'].export({ format: 'pem', type: 'pkcs8' }), 'pem');
    const certFile = tempFile(encodePem('CERTIFICATE', leaf), 'pem');
    for (const [flags, mac] of [
      [[], 'MAC: sha256, Iteration 2048'],
      [['-legacy'], 'MAC: sha1, Iteration 2048'],
      // One iteration, as in the legacy profiles: OpenSSL then leaves MacData's iterations out too.
      [['-macalg', 'sha1', '-nomaciter'], 'MAC: sha1, Iteration 1'],
    ] as const) {
      const out = join(workDir, `${++fileCount}.p12`);
      const exported = await run('openssl', [
        'pkcs12',
        '-export',
        '-inkey',
        keyFile,
        '-in',
        certFile,
        '-passout',
        `pass:${PASSWORD}`,
        '-out',
        out,
        ...flags,
      ]);
      assert.equal(exported.code, 0, exported.stderr);
      const info = await run('openssl', [
        'pkcs12',
        '-info',
        '-noout',
        '-passin',
        `pass:${PASSWORD}`,
        '-in',
        out,
        ...flags.filter((f) => f === '-legacy'),
      ]);
      assert.match(info.stderr, new RegExp(mac));
      const p12 = readFileSync(out);
      checkMac(p12, PASSWORD);
      assert.throws(() => checkMac(p12, `${PASSWORD}!`), /MAC mismatch/);
    }
  },
);

/** RFC 9579 appendix A, base64 DER. */
const RFC9579: Readonly<Record<'A.1' | 'A.2' | 'A.3', string>> = {
  'A.1': [
    'MIIKigIBAzCCCgUGCSqGSIb3DQEHAaCCCfYEggnyMIIJ7jCCBGIGCSqGSIb3DQEHBqCCBFMwggRPAgEAMIIESAYJKoZIhvcNAQcB',
    'MFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAg9pxXxY2yscwICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEK7y',
    'YaFQDi1pYwWzm9F/fs+AggPgFIT2XapyaFgDppdvLkdvaF3HXw+zjzKb7xFC76DtVPhVTWVHD+kIss+jsj+XyvMwY0aCuAhAG/Di',
    'g+vzWomnsqB5ssw5/kTb+TMQ5PXLkNeoBmB6ArKeGc/QmCBQvQG/a6b+nXSWmxNpP+71772dmWmB8gcSJ0kFFj75NrIbmNiDMCb7',
    '1Q8gOzBMFf6BpXf/3xWAJtxyic+tSNETfOJa8zTZb0+lV0w95eUmDrPUpuxEVbb0KJtIc63gRkcfrPtDd6Ii4Zzbzj2Evr4/S4hn',
    'rQBsiryVzJWyIEjaD0y6+DmG0JwMgRuGi1wBoGowi37GMrDCOyOZWC4n5wHLtYyhR6JaElxbrhxPH46z2USLKmZoF+YgEQgYcSBX',
    'MgP0t36+XQocFWYi2N5niy02TnctwF430FYsQlhJSuma4I33E808dJuMv8T/soF66HsD4Zj46hOf4nWmas7IaoSAbGKXgIa7KhGR',
    'JvijxM3WOX0aqNi/8bhnxSA7fCmIy/7opyx5UYJFWGBSmHP1pBHBVmx7Ad8SAsB9MSshnbGjGiUk4h0QcOi29/M9WwFlo4urePyI',
    '8PK2qtVAmpD3rTLlsmgzguZ69L0Q/CFUfbtqsMF0bgEuh8cfivd1DYFABEt1gypuwCUtCqQ7AXK2nQqOjsQCxVz9i9K8NDeDaau9',
    '8VAl0To2sk3/VR/QUq0PRwU1jPN5BzUevhE7SOy/ImuJKwpGqqFljYdrQmj5jDe+LmYH9QGVRlfN8zuU+48FY8CAoeBeHn5AAPml',
    '0PYPVUnt3/jQN1+v+CahNVI+La8q1Nen+j1R44aa2I3y/pUgtzXRwK+tPrxTQbG030EU51LYJn8amPWmn3w75ZIAMJrXWeKj44de',
    '7u4zdUsEBVC2uM44rIHM8MFjyYAwYsey0rcp0emsaxzar+7ZA67rlDoXvvS3NqsnTXHcn3T9tkPRoee6L7Dh3x4Od96lcRwgdYT5',
    'BwyH7e34ld4VTUmJbDEq7Ijvn4JKrwQJh1RCC+Z/ObfkC42xAm7G010u3g08xB0Qujpdg4a7VcuWrywFc7hLNquuaF4qoDaVwYXH',
    'H3iuX6YlJ/3siTKbYCVXPEZOAMBP9lF/OU76UMJBQNfU0xjDx+3AhUVgnGuCsmYlK6ETDp8qOZKGyV0KrNSGtqLx3uMhd7PETeW+',
    'ML3tDQ/0X9fMkcZHi4C2fXnoHV/qa2dGhBj4jjQ0Xh1poU6mxGn2Mebe2hDsBZkkBpnn7pK4wP/VqXdQTwqEuvzGHLVFsCuADe40',
    'ZFBmtBrf70wG7ZkO8SUZ8Zz1IX3+S024g7yjQRev/6x6TtkwggWEBgkqhkiG9w0BBwGgggV1BIIFcTCCBW0wggVpBgsqhkiG9w0B',
    'DAoBAqCCBTEwggUtMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhTxzw+VptrYAICCAAwDAYIKoZIhvcNAgkFADAdBglg',
    'hkgBZQMEASoEEK9nSqc1I2t4tMVGbWHpdtQEggTQzCwI7j34gCTvfj6nuOSndAjShGv7mN2j7WMV0pslTpq2b9Bn3vn1Y0JMvL4E',
    '7sLrUzNU02pdOcfCnEpMFccNv2sQrLp1mOCKxu8OjSqHZLoKVL0ROVsZ8dMECLLigDlPKRiSyLErl14tErX4/zbkUaWMROO28kFb',
    'TbubQ8YoHlRUwsKW1xLgvfi0gRkG/zHXRfQHjX/8NStv7hXlehn7/Gy2EKPsRFhadm/iUHAfmCMkMgHTU248JER9+nsXltd59H+I',
    'eDpj/kbxZ+YvHow9XUZKu828d3MQnUpLZ1BfJGhMBPVwbVUDA40CiQBVdCoGtPJyalL28xoS3H0ILFCnwQOr6u0HwleNJPGHq78H',
    'UyH6Hwxnh0b05o163r6wTFZn5cMOxpbs/Ttd+3TrxmrYpd2XnuRme3cnaYJ0ILvpc/8eLLR7SKjDT4JhZ0h/CfcV2WWvhpQugkY0',
    'pWrZ+EIMneB1dZB96mJVLxOi148OeSgi0PsxZMNiYM33rTpwQT5WqOsEyDwUQpne5b8Kkt/s7EN0LJNnPyJJRL1LcqOdr6j+6YqR',
    'tPa7a9oWJqMcuTP+bqzGRJh+3HDlFBw2Yzp9iadv4KmB2MzhStLUoi2MSjvnnkkd5LedsshAd6WbKfF7kLAHQHT4Ai6dMEO4EKkE',
    'VF9JBtxCR4JEn6C98Lpg+Lk+rfY7gHOfZxtgGURwgXRY3aLUrdT55ZKgk3ExVKPzi5EhdpAau7JKhpOwyKozAp/OKWMNrz6hobu2',
    'Mbn1B+IA60psYHHxynBgsJHv7WQmbYh8HyGfHgVvaA8pZCYqxxjpLjSJrR8BBu9H9xkTh7KlhxgreXYv19uAYbUd95kcox9izad6',
    'VPnovgFSb+Omdy6PJACPj6hFW6PJbucP0YPpO0VtWtQdZZ3df1P0hZ7qvKwOPFA+gKZSckgqASfygiP9V3Zc8jIiwjNzoDM2QT+U',
    'UJKiiGYXJUEOO9hxzFHlGj759DcNRhpgl5AgR57ofISD9yBuCAJYPQ/aZHPFuRTrcVG3RaIbCAS73nEznKyFaLOXfzyfyaSmyhsH',
    '253tnyL1MejC+2bREko/yldgFUxvU5JI+Q3KJ6Awj+PnduHXx71E4UwSuu2xXYMpxnQwI6rroQpZBX82HhqgcLV83P8lpzQwPdHj',
    'H5zkoxmWdC0+jU/tcQfNXYpJdyoaX7tDmVclLhwl9ps/O841pIsNLJWXwvxG6B+3LN/kw4QjwN194PopiOD7+oDm5mhttO78CrBr',
    'RxHMD/0QqniZjKzSZepxlZq+J792u8vtMnuzzChxu0Bf3PhIXcJNcVhwUtr0yKe/N+NvC0tmp8wyik/BlndxN9eKbdTOi2wIi64h',
    '2QG8nOk66wQ/PSIJYwZl6eDNEQSzH/1mGCfUQnUT17UC/p+Qgenf6Auap2GWlvsJrB7u/pytz65rtjt/ouo6Ih6EwWqwVVpGXZD0',
    '7gVWH0Ke/Vr6aPGNvkLcmftPuDZsn9jiig3guhdeyRVf10Ox369kKWcG75q77hxEIzSzDyUlBNbnom9SIjut3r+qVYmWONatC6q/',
    '4D0I42Lnjd3dEyZx7jmH3g/S2ASMFzWr9pvXc61dsYOkdZ4PYa9XPUZxXFagZsoS3F1sU799+IJVU0tC0MExJTAjBgkqhkiG9w0B',
    'CRUxFgQUwWO5DorvVWYF3BWUmAw0rUEajScwfDBtMEkGCSqGSIb3DQEFDjA8MCwGCSqGSIb3DQEFDDAfBAhvRzw4sC4xcwICCAAC',
    'ASAwDAYIKoZIhvcNAgkFADAMBggqhkiG9w0CCQUABCB6pW2FOdcCNj87zS64NUXG36K5aXDnFHctIk5Bf4kG3QQITk9UIFVTRUQC',
    'AQE=',
  ].join(''),
  'A.2': [
    'MIIKigIBAzCCCgUGCSqGSIb3DQEHAaCCCfYEggnyMIIJ7jCCBGIGCSqGSIb3DQEHBqCCBFMwggRPAgEAMIIESAYJKoZIhvcNAQcB',
    'MFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAi4j6UBBY2iOgICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEFpH',
    'SS5zrk/9pkDo1JRbtE6AggPgtbMLGoFd5KLpVXMdcxLrT129L7/vCr0B0I2tnhPPA7aFtRjjuGbwooCMQwxw9qzuCX1eH4xK2LUw',
    '6Gbd2H47WimSOWJMaiUbwy4alIWELYufe74kXPmKPCyH92lN1hqu8s0EGhIl7nBhWbFzow1+qpIc9/lpujJowodSY+pNBD8oBeoU',
    '1m6DgOjgc62apL7m0nwavDUqEt7HAqtTBxKxu/3lpb1q8nblXLTqROax5feXErf+GQAqs24hUJIPg3O1eCMDVzH0h5pgZyRN9ZSI',
    'P0HC1i+d1lnbJwHyrAhZv8GMdAVKaXHETbq8zTpxT3UE/LmH1gyZGOG2B21D2dvNDKa712sHOS/t3XkFngHDLx+a9pVftt6p7Nh6',
    'jqI581tb7fyc7HBV9VUc/+xGgPgHZouaZw+I3PUzfjHboyLQer22ndBz+l1/S2GhhZ4xLXg4l0ozkgn7DX92S/UlbmcZam1apjGw',
    'kGY/7ktA8BarNW211mJF+Z+hci+BeDiM7eyEguLCYRdH+/UBiUuYjG1hi5Ki3+42pRZDFZkTHGOrcG6qE2KJDsENj+RkGiylG98v',
    '7flm4iWFVAB78AlAogT38Bod40evR7Okc48sOIW05eCH/GLSO0MHKcttYUQNMqIDiG1TLzP1czFghhG97AxiTzYkKLx2cYfspgg5',
    'PE9drq1fNzBZMUmC2bSwRhGRb5PDu6meD8uqvjxoIIZQAEV53xmD63umlUH1jhVXfcWSmhU/+vV/IWStZgQbwhF7DmH2q6S8itCk',
    'z7J7Byp5xcDiUOZ5Gpf9RJnkDTZoOYM5iA8kte6KCwA+jnmCgstI5EbRbnsNcjNvAT3q/X776VdmnehW0VeL+6k4z+GvQkr+D2sx',
    'PpldIb5hrb+1rcp9nOQgtpBnbXaT16Lc1HdTNe5kx4ScujXOWwfdIy6bR6H0QFq2SLKAAC0qw4E8h1j3WPxll9e0FXNtoRKdsRuX',
    '3jzyqDBrQ6oGskkLwnyMtVjSX+3c9xbFc4vyJPFMPwb3Ng3syjUDrOpU5RxaMEAWt4josadWKEeyIC2FwrS1dzFn/5wv1g7E7xWq',
    '+nLq4zdppsyYOljzNUbhOEtJ2lhme3NJ45fxnxXmrPkugBda1lLf29inVuzuTjwtLjQwGk+usHJm9R/K0hTaSNRgepXnjY0cIgS+',
    '0gEY1/BWk3+Y4GE2JXds2cQToe5rCSYH3QG0QTyUAGvwX6hAlhrRRgUG3vxtYSixQ3UUuwzseQW2SUFLl1611lJ7cQwFSPyr0sL0',
    'p81vdxWiigwjkfPtgljZ2QpmzR5rX2xiqItHDy4E+iVigIYwggWEBgkqhkiG9w0BBwGgggV1BIIFcTCCBW0wggVpBgsqhkiG9w0B',
    'DAoBAqCCBTEwggUtMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhDiwsh4wt3aAICCAAwDAYIKoZIhvcNAgkFADAdBglg',
    'hkgBZQMEASoEELNFnEpJT65wsXwdfZ1g56cEggTQRo04bP/fWfPPZrTEczq1qO1HHV86j76Sgxau2WQ9OQAG998HFtNqNxO8R66e',
    'n6QFhqpWCI73tSJD+oA29qOsT+Xt2bR2z5+K7D4QoiXuLa3gXv62VkjB0DLCHAS7Mu+hkp5OKCpXCS7fo0OnAiQjM4EluAsiwwLr',
    'Hu7z1E16UwpmlgKQnaC1S44fV9znS9TxofRTnuCq1lupdn2qQjSydOU6inQeKLBflKRiLrJHOobaFmjWwp1UOQAMuZrALhHyIbOF',
    'XMPYk3mmU/1UPuRGcbcV5v2Ut2UME+WYExXSCOYR3/R4UfVkIfEzeRPFs2slJMIDS2fmMyFkEEElBckhKO9IzhQV3koeKUBdM066',
    'ufyax/uIyXPmMiB9fAqbQQ4jkQTT80bKkBAP1Bvyg2L8BssstR5iCoZgWnfA9Uz4RI5GbRqbCz7HiSkuOIowEqOox3IWbXty5VdW',
    'BXNjZBHpbE0CyMLSH/4QdGVw8R0DiCAC0mmaMaZq32yrBR32E472N+2KaicvX31MwB/LkZN46c34TGanL5LJZx0DR6ITjdNgP8Tl',
    'SSrp7y2mqi7VbKp/C/28Cj5r+m++Gk6EOUpLHsZ2d2hthrr7xqoPzUAEkkyYWedHJaoQTkoIisZb0MGlXb9thjQ8Ee429ekfjv7C',
    'QfSDS6KTE/+mhuJ33mPz1ZcIacHjdHhE6rbrKhjSrLbgmrGa8i7ezd89T4EONu0wkG9KW0wM2cn5Gb12PF6rxjTfzypG7a50yc1I',
    'J2Wrm0B7gGuYpVoCeIohr7IlxPYdeQGRO/SlzTd0xYaJVm9FzJaMNK0ZqnZoQMEPaeq8PC3kMjpa8eAiHXk9K3DWdOWYviGVCPVY',
    'IZK6Cpwe+EwfXs+2hZgZlYzcvpUWg60md1PD4UsyLQagaj37ubR6K4C4mzlhFx5NovV/C/KD+LgekMbjCtwEQeWyagev2l9KUEz7',
    '3/BT4TgQFM5K2qZpVamwmsOmldPpekGPiUCu5YxYg/y4jUKvAqj1S9t4wUAScCJx8OvXUfgpmS2+mhFPBiFps0M4O3nWG91Q6mKM',
    'qbNHPUcFDn9P7cUhs1xu3NRLyJ+QIfVfba3YBTV8A6WBYEmL9lxf1uL1WS2Bx6+Crh0keyNUPo9cRjpx1oj/xkInoc2HQODEkvuK',
    '9DD7VrLr7sDhfmJvr1mUfJMQ5/THk7Z+E+NAuMdMtkM2yKXxghZAbBrQkU3mIW150i7PsjlUw0o0/LJvQwJIsh6yeJDHY8mby9mI',
    'deP3LQAFclYKzNwmgwbdtmVAXmQxLuhmEpXfstIzkBrNJzChzb2onNSfa+r5L6XEHNHl7wCwTuuV/JWldNuYXLfVfuv3msfSjSWk',
    'v6aRtRWIvmOv0Qba2o05LlwFMd1PzKM5uN4DDYtsS9A6yQOXEsvUkWcLOJnCs8SkJRdXhJTxdmzeBqM1JttKwLbgGMbpjbxlg3ns',
    'N+Z+sEFox+2ZWOglgnBHj0mCZOiAC8wqUu+sxsLT4WndaPWKVqoRQChvDaZaNOaNqHciF9HPUcfZow+fH8TnSHneiQcDe6XcMhSa',
    'Q2MtpY8/jrgNKguZt22yH9gw/VpT3/QOB7FBgKFIEbvUaf3nVjFIlryIheg+LeiBd2isoMNNXaBwcg2YXukxJTAjBgkqhkiG9w0B',
    'CRUxFgQUwWO5DorvVWYF3BWUmAw0rUEajScwfDBtMEkGCSqGSIb3DQEFDjA8MCwGCSqGSIb3DQEFDDAfBAgUr2yP+/DBrgICCAAC',
    'ASAwDAYIKoZIhvcNAgsFADAMBggqhkiG9w0CCQUABCA5zFL93jw8ItGlcbHKhqkNwbgpp6layuOuxSju4/Vd6QQITk9UIFVTRUQC',
    'AQE=',
  ].join(''),
  'A.3': [
    'MIIKrAIBAzCCCgUGCSqGSIb3DQEHAaCCCfYEggnyMIIJ7jCCBGIGCSqGSIb3DQEHBqCCBFMwggRPAgEAMIIESAYJKoZIhvcNAQcB',
    'MFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAisrqL8obSBaQICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEECjX',
    'YYca0pwsgn1Imb9WqFGAggPgT7RcF5YzEJANZU9G3tSdpCHnyWatTlhmiCEcBGgwI5gz0+GoX+JCojgYY4g+KxeqznyCu+6GeD00',
    'T4Em7SWme9nzAfBFzng03lYCSnahSEKfgHerbzAtq9kgXkclPVk0Liy92/buf0Mqotjjs/5o78AqP86Pwbj8xYNuXOU1ivO0JiW2',
    'c2HefKYvUvMYlOh99LCoZPLHPkaaZ4scAwDjFeTICU8oowVkLKvslrg1pHbfmXHMFJ4yqub37hRtj2CoJNy4+UA2hBYlBi9WnuAJ',
    'Isjv0qS3kpLe4+J2DGe31GNG8pD01XD0l69OlailK1ykh4ap2u0KeD2z357+trCFbpWMMXQcSUCOOcVjxYqgv/l1++9huOHoPSt2',
    '24x4wZfJ7cO2zbAAx/K2CPhdvi4CBaDHADsRq/c8SAi+LX5SCocGT51zL5KQD6pnr2ExaVum+U8a3nMPPMv9R2MfFUksYNGgFvS+',
    'lcZfR3qk/G9iXtSgray0mwRA8pWzoXl43vc9HJuuCU+ryOc/h36NChhQ9ltivUNaiUc2b9AAQSrZD8Z7KtxjbH3noS+gjDtimDB0',
    'Uh199zaCwQ95y463zdYsNCESm1OT979oY+81BWFMFM/Hog5s7Ynhoi2E9+ZlyLK2UeKwvWjGzvcdPvxHR+5l/h6PyWROlpaZzmzZ',
    'Bm+NKmbXtMD2AEa5+Q32ZqJQhijXZyIji3NS65y81j/a1ZrvU0lOVKA+MSPNKU27/eKZuF1LEL6qaazTUmpznLLdaVQy5aZ1qz5d',
    'yCziKcuHIclhh+RCblHU6XdE6pUTZSRQQiGUIkPUTnU9SFlZc7VwvxgeynLyXPCSzOKNWYGajy1LxDvv28uhMgNdWF51bNkl1QYl',
    '0fNunGO7YFt4wk+g7CQ/Yu2w4P7S3ZLMw0g4eYclcvyIMt4vxXfpVTKIPyzMqLr+0dp1eCPm8fIdaBZUhMUC/OVqLwgnPNY9cXCr',
    'n2R1cGKo5LtvtjbH2skz/D5DIOErfZSBJ8LE3De4j8MAjOeC8ia8LaM4PNfW/noQP1LBsZtTDTqEy01NZ5uliIocyQzlyWChErJv',
    '/Wxh+zBpbk1iXc2Owmh2GKjx0VSe7XbiqdoKkONUNUIEsiseASiU/oXdJYUnBYVEUDJ1HPz7qnKiFhSgxNJZnoPfzbbx1hEzV+wx',
    'QqNnWIqQU0s7Jt22wDBzPBHGao2tnGRLuBZWVePJGbsxThGKwrf3vYsNJTxme5KJiaxcPMwEr+ln2AqVOzzXHXgIxv/dvK0Qa7pH',
    '3AvGzcFjQChTRipgqiRrLor0//8580h+Ly2lIFo7bCuztmcwggWEBgkqhkiG9w0BBwGgggV1BIIFcTCCBW0wggVpBgsqhkiG9w0B',
    'DAoBAqCCBTEwggUtMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAi1c7S5IEG77wICCAAwDAYIKoZIhvcNAgkFADAdBglg',
    'hkgBZQMEASoEEN6rzRtIdYxqOnY+aDS3AFYEggTQNdwUoZDXCryOFBUI/z71vfoyAxlnwJLRHNXQUlI7w0KkH22aNnSmxiaXHoCP',
    '1HgcmsYORS7p/ITi/9atCHqnGR4zHmePNhoMpNHFehdjlUUWgt004vUJ5ZwTdXweM+K4We6CfWA/tyvsyGNAsuunel+8243Zsv0m',
    'GLKpjA+ZyALt51s0knmXOD2DW49FckImUVnNC5LmvEIAmVC/ZNycryZQI+2EBkJKe+BC3834GexJnSwtUBg3Xg33ZV7X66kw8tK1',
    'Ws5zND5GQAJyIu47mnjZkIWQBY+XbWowrBZ8uXIQuxMZC0p8u62oIAtZaVQoVTR1LyR/7PISFW6ApwtbTn6uQxsb16qF8lEM0S1+',
    'x0AfJY6Zm11tyCqbb2tYZF+X34MoUkR/IYC/KCq/KJdpnd8Yqgfrwjg8dR2WGIxbp2GBHq6BK/DIehOLMcLcsOuP0DEXppfcelMO',
    'GNIs+4h4KsjWiHVDMPsqLdozBdm6FLGcno3lY5FO+avVrlElAOB+9evgaBbD2lSrEMoOjAoD090tgXXwYBEnWnIpdk+56cf5Ipsh',
    'rLBA/+H13LBLes+X1o5dd0Mu+3abp5RtAv7zLPRRtXkDYJPzgNcTvJ2Wxw2C+zrAclzZ7IRdcLESUa4CsN01aEvQgOtkCNVjSCtk',
    'JGP0FstsWM4hP7lfSB7P2tDL+ugy6GvBX1sz9fMC7QMAFL98nDm/yqcnejG1BcQXZho8n0svSfbcVByGlPZGMuI9t25+0B2MTAx0',
    'f6zoD8+fFmhcVgS6MQPybGKFawckYl0zulsePqs+G4voIW17owGKsRiv06JmZSwd3KoGmjM49ADzuG9yrQ5PSa0nhVk1tybNape4',
    'HNYHrAmmN0ILlN+E0Bs/Edz4ntYZuoc/Z35tCgm79dV4/Vl6HUZ1JrLsLrEWCByVytwVFyf3/MwTWdf+Ac+XzBuCyEMqPlvnPWsw',
    'dnaid35pxios79fPl1Hr0/Q6+DoA5GyYq8SFdP7EYLrGMGa5GJ+x5nS7z6U4UmZ2sXuKYHnuhB0zi6Y04a+fhT71x02eTeC7aPlE',
    'B319UqysujJVJnsobkcwOu/Jj0Is9YeFd693dB44xeZuYyvlwoD19lqcim0TSa2Tw7D1W/yu47dKrVP2VKxRqomuAQOpoZiuSfq1',
    '/7ysrV8U4hIlIU2vnrSVJ8EtPQKsoBW5l70dQGwXyxBkBUTHqfJ4LG/kPGRMOtUzgqFw2DjJtbym1q1MZgp2ycMon4vp7DeQLGs2',
    'XfEANB+YnRwtjpevqAnIuK6K3Y02LY4FXTNQpC37Xb04bmdIQAcE0MaoP4/hY87aS82PQ68g3bI79uKo4we2g+WaEJlEzQ7147Zz',
    'V2wbDq89W69x1MWTfaDwlEtd4UaacYchAv7BTVaaVFiRAUywWaHGePpZG2WV1feH/zd+temxWR9qMFgBZySg1jipBPVciwl0LqlW',
    's/raIBYmLmAaMMgM3759UkNVznDoFHrY4z2EADXp0RHHVzJS1x+yYvp/9I+AcW55oN0UP/3uQ6eyz/ix22sovQwhMJ8rmgR6CfyR',
    'PKmXu1RPK3puNv7mbFTfTXpYN2vXvhEZReXY8hJF/9o4G3UrJ1F0MgUHMCG86cw1z0bhPSaXVoufOnx/fRoxJTAjBgkqhkiG9w0B',
    'CRUxFgQUwWO5DorvVWYF3BWUmAw0rUEajScwgZ0wgY0wSQYJKoZIhvcNAQUOMDwwLAYJKoZIhvcNAQUMMB8ECFDaXOUaOcUPAgII',
    'AAIBQDAMBggqhkiG9w0CCwUAMAwGCCqGSIb3DQILBQAEQHIAM8C9OAsHUCj9CmOJioqf7YwD4O/b3UiZ3WqoF6OmQIRDc68SdkZJ',
    '6024l4nWlnhTE7a4lb2Tru4k3NOTa1oECE5PVCBVU0VEAgEB',
  ].join(''),
};

/**
 * RFC 9579 A.4–A.6 are A.1 with another MacData (checked byte for byte against the RFC's files by the hashes
 * below), so only their MacData is kept.
 */
const RFC9579_MAC_DATA: Readonly<Record<'A.4' | 'A.5' | 'A.6', [macData: string, sha256OfVector: string]>> = {
  // A.4: the MAC was made with 2048 PBKDF2 iterations, the parameters say 2049.
  'A.4': [
    '307d306d304906092a864886f70d01050e303c302c06092a864886f70d01050c301f04086f473c38b02e317302020801020120300c' +
      '06082a864886f70d02090500300c06082a864886f70d0209050004207aa56d8539d702363f3bcd2eb83545c6dfa2b96970e71477' +
      '2d224e417f8906dd04084e4f54205553454402020800',
    'cc6c9709db9a96e5e04dfd740d5a739decb4a9b6605694cda1c4958179d58b0f',
  ],
  // A.5: the PBKDF2 salt is swapped with MacData's ignored macSalt.
  'A.5': [
    '307c306d304906092a864886f70d01050e303c302c06092a864886f70d01050c301f04084e4f54205553454402020800020120300c' +
      '06082a864886f70d02090500300c06082a864886f70d0209050004207aa56d8539d702363f3bcd2eb83545c6dfa2b96970e71477' +
      '2d224e417f8906dd04086f473c38b02e3173020101',
    'b03af0abd2075652ed4f17fb014a1b2f7d4f61f3071931dba45e43b13c9a7ffd',
  ],
  // A.6: no keyLength in the PBKDF2 parameters.
  'A.6': [
    '307a306a304606092a864886f70d01050e3039302906092a864886f70d01050c301c04086f473c38b02e317302020800300c0608' +
      '2a864886f70d02090500300c06082a864886f70d0209050004207aa56d8539d702363f3bcd2eb83545c6dfa2b96970e714772d22' +
      '4e417f8906dd04086f473c38b02e317302020800',
    'd2925861db528cbb14d99d8b0073b203ae1577912430058516b70033c0edc9d0',
  ],
};

test('PBMAC1 verifies RFC 9579 appendix A.1–A.3 and rejects A.4–A.6', () => {
  // A.1: PBKDF2-HMAC-SHA256 + HMAC-SHA256; A.2: HMAC-SHA512 keyed by PBKDF2-HMAC-SHA256; A.3: SHA-512 for both.
  for (const [name, base64] of Object.entries(RFC9579)) {
    const pfx = Buffer.from(base64, 'base64');
    assert.doesNotThrow(() => checkMac(pfx, '1234'), name);
    assert.throws(() => checkMac(pfx, '12345'), /MAC mismatch/, name);
  }
  const a1 = authSafeOf(Buffer.from(RFC9579['A.1'], 'base64'));
  const variant = (name: 'A.4' | 'A.5' | 'A.6') => {
    const [macData, sha256] = RFC9579_MAC_DATA[name];
    const pfx = sequence(a1.version.raw, a1.authSafe.raw, Buffer.from(macData, 'hex'));
    assert.equal(createHash('sha256').update(pfx).digest('hex'), sha256, name);
    return pfx;
  };
  assert.throws(() => checkMac(variant('A.4'), '1234'), /MAC mismatch/);
  assert.throws(() => checkMac(variant('A.5'), '1234'), /MAC mismatch/);
  assert.throws(() => checkMac(variant('A.6'), '1234'), /without a keyLength/);
});

// --- keystores --------------------------------------------------------------------------------------------

const OPENSSL_ALGORITHMS: Readonly<Record<Pkcs12Profile, { mac: string[]; certs: string; key: string }>> = {
  LegacyRC2: {
    mac: ['MAC: sha1, Iteration 1', 'MAC length: 20, salt length: 8'],
    certs: 'pbeWithSHA1And40BitRC2-CBC, Iteration 2048',
    key: 'pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048',
  },
  LegacyDES: {
    mac: ['MAC: sha1, Iteration 1', 'MAC length: 20, salt length: 8'],
    certs: 'pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048',
    key: 'pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048',
  },
  Modern2023: {
    mac: ['MAC: sha256, Iteration 2048', 'MAC length: 32, salt length: 16'],
    certs: 'PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256',
    key: 'PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256',
  },
  Modern2026: {
    // go-pkcs12 leaves MacData's (ignored) iterations at 0 and its salt empty under PBMAC1.
    mac: ['MAC: PBMAC1, Iteration 0', 'MAC length: 32, salt length: 0'],
    certs: 'PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256',
    key: 'PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256',
  },
};

/** Checks what `openssl pkcs12 -info` read from a keystore: the key, the certificates in order, the bags' attributes. */
function assertKeystoreInfo(info: Run, profile: Pkcs12Profile, key: KeyObject, certs: Buffer[]): void {
  assert.equal(info.code, 0, info.stderr);
  const algorithms = OPENSSL_ALGORITHMS[profile];
  for (const line of algorithms.mac) assert.ok(info.stderr.includes(line), `${line} in\n${info.stderr}`);
  assert.ok(info.stderr.includes(`PKCS7 Encrypted data: ${algorithms.certs}\n`), info.stderr);
  assert.ok(info.stderr.includes(`Shrouded Keybag: ${algorithms.key}\n`), info.stderr);
  const bags = infoBags(info.stdout);
  const certBags = bags.filter((bag) => bag.type === 'CERTIFICATE');
  const keyBags = bags.filter((bag) => bag.type === 'PRIVATE KEY');
  assert.deepEqual(
    certBags.map((bag) => bag.der.toString('hex')),
    certs.map((der) => der.toString('hex')),
  );
  assert.equal(keyBags.length, 1);
  assert.deepEqual(
    pkcs8(createPrivateKey({ key: keyBags[0].der, format: 'der', type: 'pkcs8' })),
    pkcs8(key),
  );
  // The key and the leaf are paired by the leaf's SHA-1; the other certificates carry an empty attribute SET.
  assert.equal(localKeyIdOf(keyBags[0]), sha1(certs[0]));
  assert.equal(localKeyIdOf(certBags[0]), sha1(certs[0]));
  for (const bag of certBags.slice(1)) assert.match(bag.attributes, /^: <Empty Attributes>\n/);
}

for (const profile of PROFILES) {
  test(
    `${profile} keystore: OpenSSL reads back each key type with its chain and CA, only with the password`,
    { skip: noOpenssl },
    async () => {
      await Promise.all(
        Object.entries(KEYS).map(async ([name, key]) => {
          const chain = CHAINS[name];
          assert.equal(chain.length, 2);
          const p12 = encodePkcs12Keystore(profile, PASSWORD, key, chain, [rootDer]);
          checkMac(p12, PASSWORD);
          assert.throws(() => checkMac(p12, 'wrong'), /MAC mismatch/);
          assertKeystoreInfo(await opensslInfo(p12, profile, PASSWORD), profile, key, [...chain, rootDer]);
          const wrong = await opensslInfo(p12, profile, `${PASSWORD}x`);
          assert.notEqual(wrong.code, 0, `${name}: OpenSSL opened the keystore with a wrong password`);
          assert.doesNotMatch(wrong.stdout, /BEGIN PRIVATE KEY/);
        }),
      );
    },
  );
}

for (const profile of JAVA_PROFILES) {
  test(
    `${profile} keystore: keytool lists one PrivateKeyEntry with the whole chain`,
    { skip: noKeytool },
    async () => {
      await Promise.all(
        Object.entries(KEYS).map(async ([name, key]) => {
          const chain = CHAINS[name];
          const p12 = encodePkcs12Keystore(profile, PASSWORD, key, chain, [rootDer]);
          const listed = await keytoolList(p12, PASSWORD);
          assert.equal(listed.code, 0, listed.stdout + listed.stderr);
          assert.match(listed.stdout, /Your keystore contains 1 entry\n/);
          const [entry] = keytoolEntries(listed.stdout);
          assert.equal(entry.type, 'PrivateKeyEntry', name);
          // Java rebuilds the chain up to the root from the extra certificates.
          assert.match(listed.stdout, /Certificate chain length: 3\n/);
          assert.deepEqual(entry.fingerprints, [...chain, rootDer].map(javaFingerprint), name);
        }),
      );
      const p12 = encodePkcs12Keystore(profile, PASSWORD, KEYS.Ed25519, CHAINS.Ed25519, [rootDer]);
      const wrong = await keytoolList(p12, 'not the password');
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.stdout + wrong.stderr, /password was incorrect/);
    },
  );
}

test(
  'keystore passwords: non-ASCII goes to the PKCS#12 KDF as BMP and to PBKDF2 as UTF-8; empty works',
  { skip: noOpenssl },
  async () => {
    const chain = CHAINS['ECDSA P-256'];
    const key = KEYS['ECDSA P-256'];
    for (const password of ['pässwörd€', '']) {
      for (const profile of PROFILES) {
        const p12 = encodePkcs12Keystore(profile, password, key, chain, []);
        checkMac(p12, password);
        assertKeystoreInfo(await opensslInfo(p12, profile, password), profile, key, chain);
      }
    }
  },
);

/** The DER elements at a path of child indexes. */
function at(element: Tlv, ...path: number[]): Tlv {
  return path.reduce((current, index) => {
    const child = readChildren(current.value)[index];
    if (!child) throw new Error(`no child ${index}`);
    return child;
  }, element);
}

/** An AlgorithmIdentifier of a password-based encryption, as go-pkcs12 writes it for `profile`. */
function assertPbe(algorithm: Tlv, pbe: 'RC2' | '3DES' | 'PBES2', saltLength: number): void {
  const expectedOid = {
    RC2: OID.pbeWithSHAAnd40BitRC2CBC,
    '3DES': OID.pbeWithSHAAnd3KeyTripleDESCBC,
    PBES2: OID.pbes2,
  }[pbe];
  assert.equal(readOid(at(algorithm, 0)), expectedOid);
  if (pbe !== 'PBES2') {
    assert.equal(expectTag(at(algorithm, 1, 0), Tag.OCTET_STRING).value.length, saltLength);
    assert.equal(integerValue(at(algorithm, 1, 1)), 2048);
    return;
  }
  const kdf = at(algorithm, 1, 0);
  assert.equal(readOid(at(kdf, 0)), OID.pbkdf2);
  assert.equal(expectTag(at(kdf, 1, 0), Tag.OCTET_STRING).value.length, saltLength);
  assert.equal(integerValue(at(kdf, 1, 1)), 2048);
  // No keyLength; the PRF's AlgorithmIdentifier without a NULL, as Go writes an absent optional RawValue.
  assert.equal(readChildren(at(kdf, 1).value).length, 3);
  assert.equal(at(kdf, 1, 2).raw.toString('hex'), '300a06082a864886f70d0209');
  assert.equal(readOid(at(algorithm, 1, 1, 0)), OID.aes256Cbc);
  assert.equal(expectTag(at(algorithm, 1, 1, 1), Tag.OCTET_STRING).value.length, 16);
}

test('keystores are laid out as go-pkcs12 lays them out', () => {
  const layouts: Record<
    Pkcs12Profile,
    { certs: 'RC2' | '3DES' | 'PBES2'; key: 'RC2' | '3DES' | 'PBES2'; salt: number }
  > = {
    LegacyRC2: { certs: 'RC2', key: '3DES', salt: 8 },
    LegacyDES: { certs: '3DES', key: '3DES', salt: 8 },
    Modern2023: { certs: 'PBES2', key: 'PBES2', salt: 16 },
    Modern2026: { certs: 'PBES2', key: 'PBES2', salt: 16 },
  };
  const chain = CHAINS['RSA 2048'];
  for (const profile of PROFILES) {
    const layout = layouts[profile];
    const p12 = encodePkcs12Keystore(profile, PASSWORD, KEYS['RSA 2048'], chain, [rootDer]);
    assert.notDeepEqual(p12, encodePkcs12Keystore(profile, PASSWORD, KEYS['RSA 2048'], chain, [rootDer]));
    const { macData, message } = authSafeOf(p12);
    const [certSafe, keySafe, ...more] = readChildren(readOne(message, Tag.SEQUENCE).value);
    assert.equal(more.length, 0);

    // The certificates: EncryptedData version 0, ciphertext as [0] IMPLICIT.
    assert.equal(readOid(at(certSafe, 0)), OID.encryptedData);
    const encryptedData = at(certSafe, 1, 0);
    assert.equal(integerValue(at(encryptedData, 0)), 0);
    assert.equal(readOid(at(encryptedData, 1, 0)), OID.data);
    assertPbe(at(encryptedData, 1, 1), layout.certs, layout.salt);
    assert.equal(at(encryptedData, 1, 2).tag, contextTag(0, false));

    // The key: a plain SafeContents holding one shrouded key bag whose only attribute is localKeyId.
    assert.equal(readOid(at(keySafe, 0)), OID.data);
    const bags = readChildren(
      readOne(readOne(at(keySafe, 1).value, Tag.OCTET_STRING).value, Tag.SEQUENCE).value,
    );
    assert.equal(bags.length, 1);
    assert.equal(readOid(at(bags[0], 0)), OID.shroudedKeyBag);
    assertPbe(at(bags[0], 1, 0, 0), layout.key, layout.salt);
    const attributes = readChildren(expectTag(at(bags[0], 2), Tag.SET).value);
    assert.equal(attributes.length, 1);
    assert.equal(readOid(at(attributes[0], 0)), OID.localKeyId);
    assert.equal(
      readOne(at(attributes[0], 1, 0).raw, Tag.OCTET_STRING).value.toString('hex'),
      sha1(chain[0]),
    );

    const macFields = readChildren(macData.value);
    const macAlgorithm = at(macData, 0, 0);
    if (profile === 'Modern2026') {
      assert.equal(readOid(at(macAlgorithm, 0)), OID.pbmac1);
      const kdfParams = at(macAlgorithm, 1, 0, 1);
      assert.equal(readOid(at(macAlgorithm, 1, 0, 0)), OID.pbkdf2);
      assert.equal(expectTag(at(kdfParams, 0), Tag.OCTET_STRING).value.length, 16);
      assert.equal(integerValue(at(kdfParams, 1)), 2048);
      assert.equal(integerValue(at(kdfParams, 2)), 32);
      assert.equal(at(kdfParams, 3).raw.toString('hex'), '300a06082a864886f70d0209');
      assert.equal(at(macAlgorithm, 1, 1).raw.toString('hex'), '300a06082a864886f70d0209');
      // MacData's own salt and iterations are Go's zero values: an empty OCTET STRING and 0.
      assert.deepEqual(
        macFields.slice(1).map((field) => field.raw.toString('hex')),
        ['0400', '020100'],
      );
      continue;
    }
    // The digest's AlgorithmIdentifier has no NULL parameters.
    assert.equal(readChildren(macAlgorithm.value).length, 1);
    assert.equal(readOid(at(macAlgorithm, 0)), profile === 'Modern2023' ? OID.sha256 : OID.sha1);
    assert.equal(expectTag(macFields[1], Tag.OCTET_STRING).value.length, layout.salt);
    if (profile === 'Modern2023') {
      assert.equal(integerValue(macFields[2]), 2048);
    } else {
      // One iteration is MacData's DEFAULT, which DER leaves out.
      assert.equal(macFields.length, 2);
    }
  }
});

test('a keystore needs a certificate', () => {
  assert.throws(
    () => encodePkcs12Keystore('LegacyDES', PASSWORD, KEYS.Ed25519, [], [rootDer]),
    /no certificate/,
  );
});

// --- truststores ------------------------------------------------------------------------------------------

test('pkixNameString prints names as Go prints pkix.Name', () => {
  assert.equal(pkixNameString(decodeCertificatePems(oddCa.certPem)[0].subject), ODD_CA_NAME);
  assert.equal(pkixNameString(decodeCertificatePems(root.certPem)[0].subject), 'CN=certkit test root');
});

const TRUSTED = [rootDer, oddCaDer, intermediateDer];
const TRUSTED_NAMES = ['CN=certkit test root', ODD_CA_NAME, 'CN=certkit test intermediate'];

for (const profile of PROFILES) {
  test(
    `${profile} truststore: OpenSSL reads each CA with its friendly name and Java's trust attribute`,
    { skip: noOpenssl },
    async () => {
      const p12 = encodePkcs12Truststore(profile, PASSWORD, TRUSTED);
      checkMac(p12, PASSWORD);
      assert.throws(() => checkMac(p12, 'wrong'), /MAC mismatch/);
      const info = await opensslInfo(p12, profile, PASSWORD);
      assert.equal(info.code, 0, info.stderr);
      assert.ok(
        info.stderr.includes(`PKCS7 Encrypted data: ${OPENSSL_ALGORITHMS[profile].certs}\n`),
        info.stderr,
      );
      assert.doesNotMatch(info.stderr, /Shrouded Keybag/);
      const bags = infoBags(info.stdout);
      assert.deepEqual(
        bags.map((bag) => bag.der.toString('hex')),
        TRUSTED.map((der) => der.toString('hex')),
      );
      bags.forEach((bag, index) => {
        // OpenSSL prints the attribute it has no name for by OID, and its value (an OID) as unsupported.
        assert.match(bag.attributes, /\n {4}2\.16\.840\.1\.113894\.746875\.1\.1: <Unsupported tag 6>\n/);
        assert.equal(/friendlyName: (.*)\n/.exec(bag.attributes)?.[1], TRUSTED_NAMES[index]);
        assert.equal(localKeyIdOf(bag), undefined);
      });
      if (profile !== 'Modern2026') {
        const wrong = await opensslInfo(p12, profile, 'wrong');
        assert.notEqual(wrong.code, 0);
        assert.match(wrong.stderr, /Mac verify error/);
      }
    },
  );
}

for (const profile of JAVA_PROFILES) {
  test(
    `${profile} truststore: keytool lists every CA as a trustedCertEntry named by its subject`,
    { skip: noKeytool },
    async () => {
      const listed = await keytoolList(encodePkcs12Truststore(profile, PASSWORD, TRUSTED), PASSWORD);
      assert.equal(listed.code, 0, listed.stdout + listed.stderr);
      assert.match(listed.stdout, /Your keystore contains 3 entries\n/);
      const entries = keytoolEntries(listed.stdout);
      // Java keeps PKCS#12 aliases in lower case.
      assert.deepEqual(
        entries
          .map((entry) => [entry.alias, entry.type, entry.fingerprints.join()])
          .sort((a, b) => a[0].localeCompare(b[0])),
        TRUSTED.map((der, index) => [
          TRUSTED_NAMES[index].toLowerCase(),
          'trustedCertEntry',
          javaFingerprint(der),
        ]).sort((a, b) => a[0].localeCompare(b[0])),
      );
    },
  );
}
