/**
 * The JKS encoder checked against the real Java tools: keytool lists and converts what we write, and a tiny
 * Java program loads it through KeyStore.getInstance("JKS") for the exact creation times, aliases and bytes.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { encodeJksKeystore, encodeJksTruststore } from './jks.ts';

// A UTF-8 locale so non-ASCII arguments reach keytool intact; UTC so "Creation date" is the day we wrote.
const env = { ...process.env, LC_ALL: 'C.UTF-8', TZ: 'UTC' };

function run(command: string, args: string[]) {
  const result = spawnSync(command, args, { encoding: 'utf8', env });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}${result.error ?? ''}` };
}

function mustRun(command: string, args: string[]): string {
  const { ok, output } = run(command, args);
  assert.ok(ok, `${command} ${args.join(' ')} failed:\n${output}`);
  return output;
}

// Only a tool that cannot be started skips; one that starts and misbehaves fails the tests.
const missing = ['keytool', 'java', 'javac', 'openssl'].filter(
  (tool) =>
    (spawnSync(tool, [tool === 'openssl' ? 'version' : '-help']).error as { code?: string })?.code ===
    'ENOENT',
);
const skip = missing.length > 0 ? `not on PATH: ${missing.join(', ')}` : false;

const dir = mkdtempSync(join(tmpdir(), 'certkit-jks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
function file(suffix: string): string {
  return join(dir, `f${fileCounter++}${suffix}`);
}

/** Loads the store with Java's own JKS implementation; strings cross the process boundary as base64 UTF-8. */
const PROBE = `
import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;

public class JksProbe {
  public static void main(String[] args) throws Exception {
    Base64.Encoder b64 = Base64.getEncoder();
    char[] password = new String(Base64.getDecoder().decode(args[1]), StandardCharsets.UTF_8).toCharArray();
    KeyStore store = KeyStore.getInstance("JKS");
    try (FileInputStream in = new FileInputStream(args[0])) { store.load(in, password); }
    for (String alias : Collections.list(store.aliases())) {
      boolean isKey = store.isKeyEntry(alias);
      Certificate[] certs = isKey ? store.getCertificateChain(alias) : new Certificate[] { store.getCertificate(alias) };
      List<String> encoded = new ArrayList<>();
      for (Certificate cert : certs) encoded.add(b64.encodeToString(cert.getEncoded()));
      System.out.println(String.join("\\t",
          b64.encodeToString(alias.getBytes(StandardCharsets.UTF_8)),
          Long.toString(store.getCreationDate(alias).getTime()),
          isKey ? b64.encodeToString(store.getKey(alias, password).getEncoded()) : "-",
          String.join(",", encoded)));
    }
  }
}
`;

interface ProbedEntry {
  created: number;
  /** PKCS#8 DER as Java re-encodes it, or undefined for a trusted certificate entry. */
  key?: Buffer;
  certs: Buffer[];
}

function probe(store: Buffer, password: string): Map<string, ProbedEntry> {
  const path = file('.jks');
  writeFileSync(path, store);
  const output = mustRun('java', ['-cp', dir, 'JksProbe', path, Buffer.from(password).toString('base64')]);
  const entries = new Map<string, ProbedEntry>();
  for (const line of output.trim().split('\n').filter(Boolean)) {
    const [alias, created, key, certs] = line.split('\t');
    entries.set(Buffer.from(alias, 'base64').toString('utf8'), {
      created: Number(created),
      key: key === '-' ? undefined : Buffer.from(key, 'base64'),
      certs: certs.split(',').map((c) => Buffer.from(c, 'base64')),
    });
  }
  return entries;
}

function keytoolList(store: Buffer, password: string) {
  const path = file('.jks');
  writeFileSync(path, store);
  return run('keytool', ['-list', '-v', '-storetype', 'JKS', '-keystore', path, '-storepass', password]);
}

/** "Alias name" → "Entry type" and "Certificate chain length" from `keytool -list -v`. */
function listedEntries(output: string) {
  const entries = new Map<string, { type: string; chainLength?: number; created: string }>();
  for (const block of output.split('Alias name: ').slice(1)) {
    const alias = block.slice(0, block.indexOf('\n'));
    const type = /^Entry type: (.*)$/m.exec(block)?.[1] ?? '';
    const created = /^Creation date: (.*)$/m.exec(block)?.[1] ?? '';
    const chain = /^Certificate chain length: (\d+)$/m.exec(block)?.[1];
    entries.set(alias, { type, created, chainLength: chain === undefined ? undefined : Number(chain) });
  }
  return entries;
}

/** keytool converts the key entry to PKCS#12; openssl prints the key and certificates back. */
function roundTripThroughPkcs12(store: Buffer, password: string, alias: string, p12Password: string) {
  const src = file('.jks');
  const dest = file('.p12');
  writeFileSync(src, store);
  mustRun('keytool', [
    '-importkeystore',
    ...['-srckeystore', src, '-srcstoretype', 'JKS', '-srcstorepass', password],
    ...['-destkeystore', dest, '-deststoretype', 'PKCS12', '-deststorepass', p12Password],
    ...['-srcalias', alias, '-srckeypass', password, '-destkeypass', p12Password],
  ]);
  const printed = mustRun('openssl', ['pkcs12', '-in', dest, '-nodes', '-passin', `pass:${p12Password}`]);
  const keys = printed.match(/-----BEGIN PRIVATE KEY-----[^-]+-----END PRIVATE KEY-----/g) ?? [];
  assert.equal(keys.length, 1, printed);
  const certs = printed.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  return { key: pkcs8(createPrivateKey(keys[0])), certs: certs.map((pem) => new X509Certificate(pem).raw) };
}

function pkcs8(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'pkcs8' });
}

function sortedHex(certs: Buffer[]): string[] {
  return certs.map((c) => c.toString('hex')).sort();
}

function writePem(key: KeyObject): string {
  const path = file('.key');
  writeFileSync(path, key.export({ format: 'pem', type: 'pkcs8' }));
  return path;
}

const caExtensions = join(dir, 'ca.ext');

/** Certificate for `key` signed by the CA in (caCert, caKey), or self-signed without one; returns DER. */
function certificate(cn: string, key: KeyObject, isCa: boolean, issuer?: { cert: string; key: string }) {
  const keyPath = writePem(key);
  const out = file('.pem');
  const ext = isCa ? ['-extfile', caExtensions, '-extensions', 'ca'] : [];
  if (issuer) {
    const csr = file('.csr');
    mustRun('openssl', ['req', '-new', '-key', keyPath, '-subj', `/CN=${cn}`, '-out', csr]);
    mustRun('openssl', [
      ...['x509', '-req', '-in', csr, '-CA', issuer.cert, '-CAkey', issuer.key, '-CAcreateserial'],
      ...['-days', '30', '-out', out, ...ext],
    ]);
  } else {
    mustRun('openssl', ['req', '-x509', '-key', keyPath, '-subj', `/CN=${cn}`, '-days', '30', '-out', out]);
  }
  return { der: new X509Certificate(readFileSync(out)).raw, cert: out, key: keyPath };
}

const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

let root: ReturnType<typeof certificate>;
let otherRoot: ReturnType<typeof certificate>;
let intermediate: ReturnType<typeof certificate>;

before(() => {
  if (skip) return;
  writeFileSync(join(dir, 'JksProbe.java'), PROBE);
  mustRun('javac', ['-d', dir, join(dir, 'JksProbe.java')]);
  writeFileSync(
    caExtensions,
    '[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n',
  );
  root = certificate('certkit jks root', ecKey(), true);
  otherRoot = certificate('certkit jks other root', ecKey(), true);
  intermediate = certificate('certkit jks intermediate', ecKey(), true, root);
});

const keyTypes: [string, () => KeyObject][] = [
  ['RSA 2048', () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
  ['ECDSA P-256', ecKey],
  // Java 15+ has an EdDSA KeyFactory, so Java 17 recovers Ed25519 keys from JKS like any other.
  ['Ed25519', () => generateKeyPairSync('ed25519').privateKey],
];

for (const [name, generate] of keyTypes) {
  test(
    `${name}: keytool lists the key entry with its chain and the CAs, and the key round-trips`,
    { skip },
    () => {
      const key = generate();
      const leaf = certificate(`${name} leaf`, key, false, intermediate);
      const chain = [leaf.der, intermediate.der];
      const store = encodeJksKeystore('changeit', 'certificate', key, chain, [root.der, otherRoot.der]);

      const listing = keytoolList(store, 'changeit');
      assert.ok(listing.ok, listing.output);
      assert.match(listing.output, /^Keystore type: JKS$/m);
      assert.match(listing.output, /^Your keystore contains 3 entries$/m);
      const listed = listedEntries(listing.output);
      assert.deepEqual([...listed.keys()].sort(), ['ca', 'ca-1', 'certificate']);
      assert.equal(listed.get('certificate')?.type, 'PrivateKeyEntry');
      assert.equal(listed.get('certificate')?.chainLength, 2);
      assert.equal(listed.get('ca')?.type, 'trustedCertEntry');
      assert.equal(listed.get('ca-1')?.type, 'trustedCertEntry');

      // Java's view: the key decrypts to our PKCS#8, the chain is in order, each CA under its alias.
      const probed = probe(store, 'changeit');
      const entry = probed.get('certificate');
      assert.ok(entry?.key, 'no key entry');
      assert.deepEqual(pkcs8(createPrivateKey({ key: entry.key, format: 'der', type: 'pkcs8' })), pkcs8(key));
      assert.deepEqual(entry.certs, chain);
      assert.deepEqual(probed.get('ca')?.certs, [root.der]);
      assert.deepEqual(probed.get('ca-1')?.certs, [otherRoot.der]);
      assert.equal(probed.get('ca')?.key, undefined);

      const back = roundTripThroughPkcs12(store, 'changeit', 'certificate', 'changeit');
      assert.deepEqual(back.key, pkcs8(key));
      assert.deepEqual(sortedHex(back.certs), sortedHex(chain));
    },
  );
}

test(
  'a wrong store password fails the integrity check, a wrong key password fails key recovery',
  { skip },
  () => {
    const key = ecKey();
    const leaf = certificate('leaf', key, false, root);
    const store = encodeJksKeystore('right-password', 'certificate', key, [leaf.der], [root.der]);
    assert.ok(keytoolList(store, 'right-password').ok);

    const wrong = keytoolList(store, 'wrong-password');
    assert.equal(wrong.ok, false);
    assert.match(wrong.output, /Keystore was tampered with, or password was incorrect/);

    // Same store password, other key password: only the key protector's check digest can notice.
    const src = file('.jks');
    writeFileSync(src, store);
    const recover = run('keytool', [
      '-importkeystore',
      ...['-srckeystore', src, '-srcstoretype', 'JKS', '-srcstorepass', 'right-password'],
      ...['-destkeystore', file('.p12'), '-deststoretype', 'PKCS12', '-deststorepass', 'changeit'],
      ...['-srcalias', 'certificate', '-srckeypass', 'wrong-password', '-destkeypass', 'changeit'],
    ]);
    assert.equal(recover.ok, false);
    assert.match(recover.output, /Cannot recover key/);
  },
);

test('truststore: one trustedCertEntry per CA, aliased ca, ca-1, ca-2', { skip }, () => {
  const third = certificate('third root', ecKey(), true);
  const cas = [root.der, otherRoot.der, third.der];
  const store = encodeJksTruststore('changeit', cas);

  const listing = keytoolList(store, 'changeit');
  assert.ok(listing.ok, listing.output);
  assert.match(listing.output, /^Your keystore contains 3 entries$/m);
  const listed = listedEntries(listing.output);
  assert.deepEqual([...listed.keys()].sort(), ['ca', 'ca-1', 'ca-2']);
  for (const entry of listed.values()) assert.equal(entry.type, 'trustedCertEntry');

  const probed = probe(store, 'changeit');
  assert.deepEqual(probed.get('ca')?.certs, [cas[0]]);
  assert.deepEqual(probed.get('ca-1')?.certs, [cas[1]]);
  assert.deepEqual(probed.get('ca-2')?.certs, [cas[2]]);

  assert.equal(keytoolList(store, 'changeme').ok, false);

  const empty = keytoolList(encodeJksTruststore('changeit', []), 'changeit');
  assert.ok(empty.ok, empty.output);
  assert.match(empty.output, /^Your keystore contains 0 entries$/m);
});

test('non-ASCII password and alias: UTF-16BE password, modified UTF-8 alias, lower-cased', { skip }, () => {
  // ü and 証明書 take 2 and 3 bytes; the emoji is a surrogate pair, which modified UTF-8 writes as two
  // 3-byte sequences (Java's readUTF rejects the 4-byte UTF-8 form) and the password as two code units.
  const password = 'pässwörd-🔑';
  const alias = 'Schlüssel-証明書-😀';
  const key = ecKey();
  const leaf = certificate('leaf', key, false, intermediate);
  const store = encodeJksKeystore(password, alias, key, [leaf.der, intermediate.der], [root.der]);

  const listing = keytoolList(store, password);
  assert.ok(listing.ok, listing.output);
  const listed = listedEntries(listing.output);
  assert.deepEqual([...listed.keys()].sort(), ['ca', 'schlüssel-証明書-😀']);
  assert.equal(listed.get('schlüssel-証明書-😀')?.type, 'PrivateKeyEntry');
  assert.equal(keytoolList(store, 'passwörd-🔑').ok, false);

  const probed = probe(store, password);
  assert.deepEqual([...probed.keys()].sort(), ['ca', 'schlüssel-証明書-😀']);
  assert.deepEqual(probed.get('schlüssel-証明書-😀')?.certs, [leaf.der, intermediate.der]);

  // Java's PKCS#12 refuses non-ASCII passwords ("Password is not ASCII"), so only the JKS side uses it;
  // the JKS key protector must accept it for the key to come out. Lookup ignores case, as Java's JKS does.
  const back = roundTripThroughPkcs12(store, password, alias.toUpperCase(), 'changeit');
  assert.deepEqual(back.key, pkcs8(key));
  assert.deepEqual(sortedHex(back.certs), sortedHex([leaf.der, intermediate.der]));
});

test('creation time: the given instant, to the millisecond, on every entry; now by default', { skip }, () => {
  const key = ecKey();
  const leaf = certificate('leaf', key, false, root);
  const now = new Date('2021-03-04T05:06:07.890Z');
  const store = encodeJksKeystore('changeit', 'certificate', key, [leaf.der], [root.der, otherRoot.der], now);

  const listed = listedEntries(keytoolList(store, 'changeit').output);
  assert.equal(listed.size, 3);
  for (const entry of listed.values()) assert.equal(entry.created, 'Mar 4, 2021');
  for (const entry of probe(store, 'changeit').values()) assert.equal(entry.created, now.getTime());

  const truststore = encodeJksTruststore('changeit', [root.der], now);
  assert.equal(probe(truststore, 'changeit').get('ca')?.created, now.getTime());

  const earliest = Date.now();
  const current = encodeJksKeystore('changeit', 'certificate', key, [leaf.der], [root.der]);
  const latest = Date.now();
  for (const entry of probe(current, 'changeit').values()) {
    assert.ok(
      entry.created >= earliest && entry.created <= latest,
      `${entry.created} not in [${earliest}, ${latest}]`,
    );
  }
});

test(
  'no CAs gives a lone key entry; a key alias of "ca" is replaced by the first CA, as in cert-manager',
  { skip },
  () => {
    const key = ecKey();
    const leaf = certificate('leaf', key, false, root);

    const alone = probe(encodeJksKeystore('changeit', 'my-key', key, [leaf.der], []), 'changeit');
    assert.deepEqual([...alone.keys()], ['my-key']);
    assert.ok(alone.get('my-key')?.key);

    const clash = encodeJksKeystore('changeit', 'CA', key, [leaf.der], [root.der, otherRoot.der]);
    const listing = keytoolList(clash, 'changeit');
    assert.ok(listing.ok, listing.output);
    assert.match(listing.output, /^Your keystore contains 2 entries$/m);
    const probed = probe(clash, 'changeit');
    assert.equal(probed.get('ca')?.key, undefined);
    assert.deepEqual(probed.get('ca')?.certs, [root.der]);
  },
);

test('rejects what Java could not load: public keys, empty chains, non-DER certificates', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const der = Buffer.from([0x30, 0x00]);
  assert.throws(() => encodeJksKeystore('pw', 'a', publicKey, [der], []), /expected a private key/);
  assert.throws(() => encodeJksKeystore('pw', 'a', privateKey, [], []), /certificate chain is empty/);
  assert.throws(() => encodeJksKeystore('pw', 'a', privateKey, [der], [Buffer.alloc(0)]), /cas\[0\]/);
  assert.throws(() => encodeJksTruststore('pw', [der, Buffer.from('-----BEGIN')]), /cas\[1\]/);
  assert.throws(() => encodeJksKeystore('pw', 'a'.repeat(65536), privateKey, [der], []), /at most 65535/);
  assert.throws(() => encodeJksTruststore('pw', [der], new Date(NaN)), /invalid creation time/);
});
