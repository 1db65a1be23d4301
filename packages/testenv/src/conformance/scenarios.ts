/**
 * The table scenarios of cert-manager's Certificates conformance suite
 * (`test/e2e/suite/conformance/certificates/tests.go`, scenarios 1–22), as spec
 * builders plus the checks some scenarios add to the default ones. Every one applies to the SelfSigned and CA
 * issuers (their suites mark only ACMEUseARI unsupported, which no table scenario needs).
 */

import { randomInt } from 'node:crypto';
import type { CertificateSpec } from '@certkit/certificates/api/types';
import { opensslReferenceCertificate, opensslSubjectRfc2253, opensslUnavailable } from './openssl.ts';
import { type Check, expectDuration } from './validations.ts';
import {
  encodeOid,
  type GeneralName,
  Oid,
  parseRfc4514,
  pemCertificates,
  tlv,
  Tag,
  viewCertificate,
} from './x509-view.ts';

export const DOMAIN_SUFFIX = 'example.com';
export const SHARED_IP_ADDRESS = '127.0.0.1';

const LETTERS = 'bcdfghjklmnpqrstvwxz';
/** Like k8s.io/apimachinery rand.String: lower-case, safe as a DNS label. */
export function randomString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += LETTERS[randomInt(LETTERS.length)];
  return out;
}
export const randomSubdomain = (length = 10) => `${randomString(length)}.${DOMAIN_SUFFIX}`;

export type ScenarioSpec = Omit<CertificateSpec, 'secretName' | 'issuerRef'>;

export interface BuiltScenario {
  spec: ScenarioSpec;
  /** Checks beyond the default and feature validations, by name. */
  extra?: Record<string, Check>;
}

export interface Scenario {
  id: number;
  title: string;
  /** The upstream feature set the scenario needs (for the record; all are supported here). */
  features: string[];
  build(): BuiltScenario;
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 6: the SAN extension equals a reference built independently (GeneralNames compared as a
// multiset of (tag, content), as the upstream HaveSameSANsAs matcher does).

export const OTHER_NAMES = [
  { oid: Oid.upn, utf8Value: 'upn@domain.test' },
  { oid: Oid.upn, utf8Value: 'upn@domain2.test' },
];
export const OTHER_NAMES_EMAIL = 'email@domain.test';

const generalNameKey = (n: GeneralName) => `${n.tagNumber}:${n.content.toString('base64')}`;
const sortedGeneralNames = (names: GeneralName[]) => names.map(generalNameKey).sort();

/** RFC 5280 GeneralNames for the scenario, encoded by hand: rfc822Name [1] and otherName [0]. */
function handBuiltReference(): GeneralName[] {
  return [
    { tagNumber: 1, content: Buffer.from(OTHER_NAMES_EMAIL, 'latin1') },
    ...OTHER_NAMES.map((o) => ({
      tagNumber: 0,
      content: Buffer.concat([
        encodeOid(o.oid),
        tlv(0xa0, tlv(Tag.UTF8_STRING, Buffer.from(o.utf8Value, 'utf8'))),
      ]),
    })),
  ];
}

let opensslReference: GeneralName[] | string | undefined;
/** The reference upstream embeds, regenerated: `openssl req -x509 -addext subjectAltName=…`. */
function opensslGeneralNames(): GeneralName[] | string {
  if (opensslReference === undefined) {
    const reason = opensslUnavailable();
    if (reason) return (opensslReference = `skipped: ${reason}`);
    const san = [
      `email:${OTHER_NAMES_EMAIL}`,
      ...OTHER_NAMES.map((o) => `otherName:msUPN;UTF8:${o.utf8Value}`),
    ].join(',');
    const result = opensslReferenceCertificate(san);
    if (!result.ok) return (opensslReference = `openssl could not make the reference: ${result.output}`);
    opensslReference = viewCertificate(pemCertificates(result.files['cert.pem'])[0]).generalNames;
  }
  return opensslReference;
}

export const expectSameSansAsReference: Check = (issued) => {
  if (!issued.view) return [];
  const have = sortedGeneralNames(issued.view.generalNames);
  const failures: string[] = [];
  const hand = sortedGeneralNames(handBuiltReference());
  if (JSON.stringify(have) !== JSON.stringify(hand))
    failures.push(
      `SAN GeneralNames ${JSON.stringify(have)} differ from the hand-built ${JSON.stringify(hand)}`,
    );
  const reference = opensslGeneralNames();
  if (typeof reference === 'string') {
    if (!reference.startsWith('skipped')) failures.push(reference);
  } else {
    const want = sortedGeneralNames(reference);
    if (JSON.stringify(have) !== JSON.stringify(want))
      failures.push(`SAN GeneralNames ${JSON.stringify(have)} differ from openssl's ${JSON.stringify(want)}`);
  }
  const parsed = issued.view.otherNames.map((o) => `${o.oid}=${o.utf8Value}`).sort();
  const wantParsed = OTHER_NAMES.map((o) => `${o.oid}=${o.utf8Value}`).sort();
  if (JSON.stringify(parsed) !== JSON.stringify(wantParsed))
    failures.push(`otherNames ${JSON.stringify(parsed)}, want ${JSON.stringify(wantParsed)}`);
  return failures;
};

// ---------------------------------------------------------------------------------------------------------
// Scenario 7: the raw subject RDNSequence equals the literal subject, order preserved.

const SHORT_NAMES: Record<string, string> = {
  CN: Oid.commonName,
  O: Oid.organization,
  OU: Oid.organizationalUnit,
};

export function expectLiteralSubjectOrder(host: string, literalSubject: string): Check {
  return (issued) => {
    if (!issued.view || !issued.data['tls.crt']) return [];
    const failures: string[] = [];
    const have = issued.view.subject.map((rdn) => rdn.map((a) => `${a.oid}=${a.value}`));
    // Encoding order is the reverse of the string's.
    const handWritten = [
      [`${Oid.organization}=Corp.`],
      [`${Oid.organizationalUnit}=Dept.`],
      [`${Oid.organizationalUnit}=Baz`],
      [`${Oid.organizationalUnit}=Bar`],
      [`${Oid.organizationalUnit}=FooLong`],
      [`${Oid.commonName}=${host}`],
    ];
    if (JSON.stringify(have) !== JSON.stringify(handWritten))
      failures.push(`raw subject RDNs ${JSON.stringify(have)}, want ${JSON.stringify(handWritten)}`);
    const parsed = parseRfc4514(literalSubject).map((rdn) =>
      rdn.map((a) => `${SHORT_NAMES[a.type]}=${a.value}`),
    );
    if (JSON.stringify(have) !== JSON.stringify(parsed))
      failures.push(
        `raw subject RDNs ${JSON.stringify(have)} differ from the parsed literalSubject ${JSON.stringify(parsed)}`,
      );
    if (!opensslUnavailable()) {
      const printed = opensslSubjectRfc2253(issued.chainPems[0]);
      if (printed.subject !== literalSubject)
        failures.push(
          `openssl prints the subject as ${JSON.stringify(printed.subject ?? printed.output)}, want ${JSON.stringify(literalSubject)}`,
        );
    }
    return failures;
  };
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 20: arbitrary key usages.

export const expectArbitraryKeyUsages: Check = (issued) => {
  if (!issued.view || !issued.leaf) return [];
  const failures: string[] = [];
  const ekus = issued.leaf.keyUsage ?? []; // node:crypto: the EKU OIDs
  for (const [name, oid] of [
    ['serverAuth', Oid.serverAuth],
    ['clientAuth', Oid.clientAuth],
  ]) {
    if (!ekus.includes(oid)) failures.push(`EKU ${name} missing (node:crypto sees ${JSON.stringify(ekus)})`);
  }
  const ekuExtension = issued.view.extensions.find((e) => e.oid === Oid.extKeyUsage);
  if (!ekuExtension) failures.push('no ExtendedKeyUsage extension');
  for (const bit of ['digitalSignature', 'dataEncipherment']) {
    if (!issued.view.keyUsages.includes(bit))
      failures.push(`KeyUsage ${bit} missing (have ${JSON.stringify(issued.view.keyUsages)})`);
  }
  return failures;
};

// ---------------------------------------------------------------------------------------------------------

export const TABLE: Scenario[] = [
  {
    id: 1,
    title: 'should issue a basic, defaulted certificate for a single distinct DNS Name',
    features: ['OnlySAN'],
    build: () => ({ spec: { dnsNames: [randomSubdomain()] } }),
  },
  {
    id: 2,
    title: 'should issue a CA certificate with the CA basicConstraint set',
    features: ['IssueCA'],
    build: () => ({ spec: { isCA: true, dnsNames: [randomSubdomain()] } }),
  },
  {
    id: 3,
    title: 'should issue an ECDSA, defaulted certificate for a single distinct DNS Name',
    features: ['ECDSA', 'OnlySAN'],
    build: () => ({ spec: { privateKey: { algorithm: 'ECDSA' }, dnsNames: [randomSubdomain()] } }),
  },
  {
    id: 4,
    title: 'should issue an Ed25519, defaulted certificate for a single distinct DNS Name',
    features: ['Ed25519', 'OnlySAN'],
    build: () => ({ spec: { privateKey: { algorithm: 'Ed25519' }, dnsNames: [randomSubdomain()] } }),
  },
  {
    id: 5,
    title: 'should issue a basic, defaulted certificate for a single Common Name',
    features: ['CommonName'],
    build: () => ({ spec: { commonName: `test-common-name-${randomString(10)}` } }),
  },
  {
    id: 6,
    title:
      'should issue a certificate with a couple valid otherName SAN values set as well as an emailAddress',
    features: ['OtherNames'],
    build: () => ({
      spec: {
        otherNames: OTHER_NAMES.map((o) => ({ oid: o.oid, utf8Value: o.utf8Value })),
        emailAddresses: [OTHER_NAMES_EMAIL],
        commonName: 'someCN',
      },
      extra: { expectSameSansAsReference },
    }),
  },
  {
    id: 7,
    title:
      'should issue a basic, defaulted certificate for a single distinct DNS Name with a literal subject',
    features: ['LiteralSubject'],
    build: () => {
      const host = `*.${randomString(10)}.foo-long.bar.com`;
      const literalSubject = `CN=${host},OU=FooLong,OU=Bar,OU=Baz,OU=Dept.,O=Corp.`;
      return {
        spec: { literalSubject, dnsNames: [host] },
        extra: { expectLiteralSubjectOrder: expectLiteralSubjectOrder(host, literalSubject) },
      };
    },
  },
  {
    id: 8,
    title: 'should issue an ECDSA, defaulted certificate for a single Common Name',
    features: ['ECDSA', 'CommonName'],
    build: () => ({
      spec: { privateKey: { algorithm: 'ECDSA' }, commonName: `test-common-name-${randomString(10)}` },
    }),
  },
  {
    id: 9,
    title: 'should issue an Ed25519, defaulted certificate for a single Common Name',
    features: ['Ed25519', 'CommonName'],
    build: () => ({
      spec: { privateKey: { algorithm: 'Ed25519' }, commonName: `test-common-name-${randomString(10)}` },
    }),
  },
  {
    id: 10,
    title: 'should issue a certificate that defines an IP Address',
    features: ['IPAddress'],
    build: () => ({ spec: { ipAddresses: [SHARED_IP_ADDRESS] } }),
  },
  {
    id: 11,
    title: 'should issue a certificate that defines a DNS Name and IP Address',
    features: ['OnlySAN', 'IPAddress'],
    build: () => ({ spec: { ipAddresses: [SHARED_IP_ADDRESS], dnsNames: [randomSubdomain()] } }),
  },
  {
    id: 12,
    title: 'should issue a certificate that defines a Common Name and IP Address',
    features: ['CommonName', 'IPAddress'],
    build: () => ({
      spec: { commonName: `test-common-name-${randomString(10)}`, ipAddresses: [SHARED_IP_ADDRESS] },
    }),
  },
  {
    id: 13,
    title: 'should issue a certificate that defines an Email Address',
    features: ['EmailSANs', 'OnlySAN'],
    build: () => ({ spec: { emailAddresses: ['alice@example.com'] } }),
  },
  {
    id: 14,
    title: 'should issue a certificate that defines a Common Name and URI SAN',
    features: ['URISANs', 'CommonName'],
    build: () => ({
      spec: {
        commonName: `test-common-name-${randomString(10)}`,
        uris: ['spiffe://cluster.local/ns/sandbox/sa/foo'],
      },
    }),
  },
  {
    id: 15,
    title:
      'should issue a certificate that defines a 2 distinct DNS Names with one copied to the Common Name',
    features: ['CommonName'],
    build: () => {
      const commonName = randomSubdomain();
      return { spec: { commonName, dnsNames: [commonName, randomSubdomain()] } };
    },
  },
  {
    id: 16,
    title: 'should issue a certificate that defines a distinct DNS Name and another distinct Common Name',
    features: ['CommonName'],
    build: () => ({ spec: { commonName: randomSubdomain(), dnsNames: [randomSubdomain()] } }),
  },
  {
    id: 17,
    title: 'should issue a certificate that defines a DNS Name and sets a duration',
    features: ['Duration', 'OnlySAN'],
    build: () => ({
      spec: { dnsNames: [randomSubdomain()], duration: '896h' },
      // f.CertificateDurationValid(ctx, cert, 896h, 30s)
      extra: { certificateDurationValid: expectDuration(896 * 3600_000, 30_000) },
    }),
  },
  {
    id: 18,
    title: 'should issue a certificate that defines a wildcard DNS Name',
    features: ['Wildcards', 'OnlySAN'],
    build: () => ({ spec: { dnsNames: [`*.${randomSubdomain()}`] } }),
  },
  {
    id: 19,
    title: 'should issue a certificate that includes only a URISANs name',
    features: ['URISANs', 'OnlySAN'],
    build: () => ({ spec: { uris: ['spiffe://cluster.local/ns/sandbox/sa/foo'] } }),
  },
  {
    id: 20,
    title: 'should issue a certificate that includes arbitrary key usages',
    features: ['KeyUsages', 'OnlySAN'],
    build: () => ({
      spec: {
        dnsNames: [randomSubdomain()],
        usages: ['signing', 'data encipherment', 'server auth', 'client auth'],
      },
      extra: { expectArbitraryKeyUsages },
    }),
  },
  {
    id: 21,
    title: 'should issue a certificate that defines a long domain',
    features: ['OnlySAN', 'LongDomain'],
    // The maximum length of one label.
    build: () => ({ spec: { dnsNames: [randomSubdomain(63)] } }),
  },
  {
    id: 22,
    title: 'should issue a certificate that defines a wildcard DNS Name and its apex DNS Name',
    features: ['Wildcards', 'OnlySAN'],
    build: () => {
      const domain = randomSubdomain();
      return { spec: { dnsNames: [`*.${domain}`, domain] } };
    },
  },
];

export const STANDALONE_TITLES = {
  30: 'should issue another certificate with the same private key if the existing certificate and CertificateRequest are deleted',
  31: 'should allow updating an existing certificate with a new DNS Name',
} as const;
