import { X509Certificate } from 'node:crypto';
import {
  parseCertificate,
  parsePrivateKey,
  publicKeysEqual,
  type CertificateInfo,
} from '@certkit/certificates/pki/index';
import type { DistinguishedName } from '@certkit/certificates/pki/index';

/**
 * The text of `certkit inspect secret NAME`, from the Secret's data alone (no cluster, no clock of its own),
 * so that it is tested without a server. Sections and labels as cmctl's `inspect secret` (Valid for, Validity
 * period, Issued By, Issued For, Certificate, Debugging), and what cmctl leaves to openssl: the expiry in
 * words, every certificate of the chain and whether each signs the one before, whether tls.key is the
 * certificate's key, and ca.crt.
 */

/** The Secret's keys the view reads, as bytes (the API gives base64, decoded by the command). */
export interface TlsSecretData {
  'tls.crt'?: Buffer;
  'tls.key'?: Buffer;
  'ca.crt'?: Buffer;
}

export interface InspectOptions {
  now: Date;
  /** PEM roots "this computer" trusts (cmctl: the system pool). */
  trustedRoots: readonly string[];
}

/** One certificate of a PEM bundle, parsed twice: node:crypto for signatures, certkit's pki for the fields. */
interface Parsed {
  x509: X509Certificate;
  info: CertificateInfo;
}

function parseBundle(pem: Buffer, key: string): Parsed[] {
  const blocks =
    pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block, i) => {
    try {
      return { x509: new X509Certificate(block), info: parseCertificate(block) };
    } catch (err) {
      throw new Error(`error when parsing certificate ${i + 1} of '${key}': ${(err as Error).message}`, {
        cause: err,
      });
    }
  });
}

/** The whole view; throws (one line) when tls.crt has no certificate. */
export function formatTlsSecret(data: TlsSecretData, options: InspectOptions): string {
  if (!data['tls.crt']?.length) throw new Error("the Secret has no 'tls.crt'");
  const chain = parseBundle(data['tls.crt'], 'tls.crt');
  if (chain.length === 0) throw new Error('no PEM data found in secret');
  const ca = data['ca.crt']?.length ? parseBundle(data['ca.crt'], 'ca.crt') : [];
  const leaf = chain[0];
  return (
    [
      validFor(leaf.info),
      validityPeriod(leaf.info, options.now),
      names('Issued By', leaf.info.issuer),
      names('Issued For', leaf.info.subject),
      certificateSection(leaf),
      chainSection(chain),
      privateKeySection(leaf, data['tls.key']),
      caSection(ca, chain, options.now),
      debugging(chain, ca, options),
    ].join('\n\n') + '\n'
  );
}

/** cmctl's list: `<none>`, or one `- item` a line under the label. */
function list(items: readonly string[]): string {
  return items.length === 0 ? '<none>' : items.map((i) => `\n\t\t- ${i}`).join('');
}

function listOrOne(items: readonly string[]): string {
  return items.length === 1 ? items[0] : list(items);
}

function validFor(info: CertificateInfo): string {
  return [
    'Valid for:',
    `\tDNS Names: ${list(info.dnsNames)}`,
    `\tURIs: ${list(info.uris)}`,
    `\tIP Addresses: ${list(info.ipAddresses)}`,
    `\tEmail Addresses: ${list(info.emailAddresses)}`,
    `\tUsages: ${list([...info.keyUsages, ...info.extKeyUsages])}`,
  ].join('\n');
}

/** Go's time.RFC1123 of a UTC time ("Mon, 02 Jan 2006 15:04:05 UTC"); JavaScript's says GMT. */
export function rfc1123(date: Date): string {
  return date.toUTCString().replace(/GMT$/, 'UTC');
}

const RELATIVE = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

/** `in 89 days`, `3 hours ago`: the largest unit that still gives a count of at least two. */
export function relativeTime(to: Date, now: Date): string {
  const ms = to.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['year', 365 * 86_400_000],
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [unit, size] of units) {
    if (abs >= 2 * size) return RELATIVE.format(Math.trunc(ms / size), unit);
  }
  return RELATIVE.format(Math.trunc(ms / 1000), 'second');
}

/** The certificate's state at `now`, in words. */
export function expiryInWords(info: Pick<CertificateInfo, 'notBefore' | 'notAfter'>, now: Date): string {
  if (now < info.notBefore) return `not yet valid: becomes valid ${relativeTime(info.notBefore, now)}`;
  if (now > info.notAfter) return `expired ${relativeTime(info.notAfter, now)}`;
  return `expires ${relativeTime(info.notAfter, now)}`;
}

function validityPeriod(info: CertificateInfo, now: Date): string {
  return [
    'Validity period:',
    `\tNot Before: ${rfc1123(info.notBefore)}`,
    `\tNot After: ${rfc1123(info.notAfter)}`,
    `\tState: ${expiryInWords(info, now)}`,
  ].join('\n');
}

function names(title: string, dn: DistinguishedName): string {
  return [
    `${title}:`,
    `\tCommon Name:\t${dn.commonName || '<none>'}`,
    `\tOrganization:\t${listOrOne(dn.organizations)}`,
    `\tOrganizationalUnit:\t${listOrOne(dn.organizationalUnits)}`,
    `\tCountry:\t${listOrOne(dn.countries)}`,
  ].join('\n');
}

/** Go's x509.PublicKeyAlgorithm names. */
function publicKeyAlgorithm(x509: X509Certificate): string {
  const type = x509.publicKey.asymmetricKeyType;
  if (type === 'rsa' || type === 'rsa-pss') return 'RSA';
  if (type === 'ec') return 'ECDSA';
  if (type === 'ed25519') return 'Ed25519';
  return type ?? 'unknown';
}

function certificateSection({ x509, info }: Parsed): string {
  return [
    'Certificate:',
    `\tSigning Algorithm:\t${info.signatureAlgorithm}`,
    `\tPublic Key Algorithm: \t${publicKeyAlgorithm(x509)}`,
    // Decimal, as Go's big.Int prints it (node:crypto gives hex).
    `\tSerial Number:\t${BigInt(`0x${info.serialNumber}`).toString()}`,
    `\tFingerprints: \t${x509.fingerprint256}`,
    `\tIs a CA certificate: ${info.isCA}`,
    `\tCRL:\t${listOrOne(info.crlDistributionPoints)}`,
    `\tOCSP:\t${listOrOne(info.ocspServers)}`,
  ].join('\n');
}

/** Node prints a DN one attribute a line, most significant first; one line reads better here. */
function dnLine(dn: string | undefined): string {
  return dn?.split('\n').filter(Boolean).join(', ') || '<empty>';
}

/** Whether `child` names `parent` as its issuer and carries its signature. */
function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  return child.checkIssued(parent) && child.verify(parent.publicKey);
}

function chainSection(chain: Parsed[]): string {
  const lines = chain.map(({ x509 }, i) => {
    const next = chain[i + 1]?.x509;
    // By name and signature: node's checkIssued also wants a CA's key usage, which a self-signed leaf lacks.
    const selfSigned = x509.subject === x509.issuer && x509.verify(x509.publicKey);
    const link = selfSigned
      ? 'self-signed'
      : next === undefined
        ? `issued by ${dnLine(x509.issuer)}`
        : signedBy(x509, next)
          ? `signed by certificate ${i + 1}`
          : `NOT signed by certificate ${i + 1} (issuer ${dnLine(x509.issuer)})`;
    return `\t${i}: ${dnLine(x509.subject)} (${link}, expires ${rfc1123(x509.validToDate)})`;
  });
  return [`Chain (tls.crt, ${chain.length} certificate${chain.length === 1 ? '' : 's'}):`, ...lines].join(
    '\n',
  );
}

function privateKeySection(leaf: Parsed, keyPem: Buffer | undefined): string {
  if (!keyPem?.length) return "Private Key:\n\tMatches the certificate: <no 'tls.key'>";
  let matches: string;
  try {
    matches = publicKeysEqual(leaf.x509.publicKey, parsePrivateKey(keyPem))
      ? 'yes'
      : 'NO: tls.key is not the key of the certificate in tls.crt';
  } catch (err) {
    matches = `cannot tell: tls.key is not a private key: ${(err as Error).message}`;
  }
  return `Private Key:\n\tMatches the certificate: ${matches}`;
}

function caSection(ca: Parsed[], chain: Parsed[], now: Date): string {
  if (ca.length === 0) return 'CA (ca.crt): <none>';
  const top = chain[chain.length - 1].x509;
  const issuesChain = ca.some(
    ({ x509 }) => signedBy(top, x509) || top.fingerprint256 === x509.fingerprint256,
  );
  return [
    'CA (ca.crt):',
    ...ca.map(
      ({ x509, info }) =>
        `\t${dnLine(x509.subject)} (${info.isCA ? 'CA' : 'not a CA'}, ${expiryInWords(info, now)})`,
    ),
    `\tIssued the chain: ${issuesChain ? 'yes' : 'no'}`,
  ].join('\n');
}

/**
 * Whether the chain leads from the leaf to one of `roots`, through the bundle's other certificates, each
 * valid at `now`: cmctl's "Trusted by this computer" (Go's Verify with the bundle as intermediates).
 */
export function chainTrust(
  chain: readonly X509Certificate[],
  roots: readonly X509Certificate[],
  now: Date,
): string {
  let current = chain[0];
  const intermediates = chain.slice(1);
  for (let depth = 0; depth <= chain.length; depth++) {
    if (now < current.validFromDate || now > current.validToDate) {
      return `no: certificate ${dnLine(current.subject)} has expired or is not yet valid`;
    }
    if (roots.some((root) => signedBy(current, root))) return 'yes';
    const parent = intermediates.find((c) => c !== current && signedBy(current, c));
    if (!parent) return 'no: certificate signed by unknown authority';
    current = parent;
  }
  return 'no: the chain loops';
}

function debugging(chain: Parsed[], ca: Parsed[], options: InspectOptions): string {
  const roots = options.trustedRoots.map((pem) => new X509Certificate(pem));
  const certs = chain.map((c) => c.x509);
  const leaf = chain[0].info;
  return [
    'Debugging:',
    `\tTrusted by this computer:\t${chainTrust(certs, roots, options.now)}`,
    `\tTrusted by ca.crt:\t${
      ca.length === 0
        ? "<no 'ca.crt'>"
        : chainTrust(
            certs,
            ca.map((c) => c.x509),
            options.now,
          )
    }`,
    // certkit does not fetch CRLs or ask OCSP responders: an offline view, and the certificates it issues
    // name neither unless the issuer is configured to.
    `\tCRL Status:\t${leaf.crlDistributionPoints.length === 0 ? 'No CRL endpoints set' : 'Not checked (certkit does not fetch CRLs)'}`,
    `\tOCSP Status:\t${leaf.ocspServers.length === 0 ? 'No OCSP servers set' : 'Not checked (certkit does not query OCSP)'}`,
  ].join('\n');
}
