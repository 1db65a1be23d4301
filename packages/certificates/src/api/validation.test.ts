/**
 * The webhook rules, one table per kind: each row is a change to a valid object and the exact field
 * errors it must produce (rendered as kube-apiserver renders them), [] for a change that stays valid.
 * Expected texts follow cert-manager's validation tests where they exist.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError, newInvalid } from '@certkit/apimachinery';
import type { Certificate, CertificateRequest, CertificateSpec, ClusterIssuer, Issuer } from './types.ts';
import {
  validateCertificate,
  validateCertificateRequest,
  validateClusterIssuer,
  validateIssuer,
} from './validation.ts';
import { base64, CA_CERT, ECDSA_CSR, ED25519_CSR, RSA_CSR } from '@certkit/testenv/cert-manager/pem';
import { example, examplesOfKind } from '@certkit/testenv/cert-manager/examples';

const AT_LEAST_ONE =
  'spec: Invalid value: "": at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set';
const DNS1123 =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function certificate(spec: Partial<CertificateSpec> & Record<string, unknown>): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'test', namespace: 'default' },
    spec: { secretName: 'test-tls', issuerRef: { name: 'ca-issuer' }, ...spec } as CertificateSpec,
  };
}

const messages = (errors: ReturnType<typeof validateCertificate>) => errors.map(formatFieldError);

interface Row {
  name: string;
  spec: Partial<CertificateSpec> & Record<string, unknown>;
  errors: string[];
}

/** Rows that share a rule; each spec is merged over `{secretName, issuerRef}` (add dnsNames where needed). */
const certificateRules: Record<string, Row[]> = {
  identity: [
    { name: 'none at all', spec: {}, errors: [AT_LEAST_ONE] },
    { name: 'commonName', spec: { commonName: 'a.example.com' }, errors: [] },
    { name: 'dnsNames', spec: { dnsNames: ['a.example.com'] }, errors: [] },
    { name: 'uris', spec: { uris: ['spiffe://cluster.local/ns/a/sa/b'] }, errors: [] },
    { name: 'emailAddresses', spec: { emailAddresses: ['a@example.com'] }, errors: [] },
    { name: 'ipAddresses', spec: { ipAddresses: ['192.0.2.1'] }, errors: [] },
    {
      name: 'otherNames',
      spec: { otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'a@b' }] },
      errors: [],
    },
    { name: 'literalSubject with a CN', spec: { literalSubject: 'CN=a,O=Example' }, errors: [] },
    { name: 'literalSubject without a CN', spec: { literalSubject: 'O=SomeCorp' }, errors: [AT_LEAST_ONE] },
    { name: 'empty lists', spec: { dnsNames: [], uris: [] }, errors: [AT_LEAST_ONE] },
  ],
  secretName: [
    {
      name: 'missing',
      spec: { secretName: '', dnsNames: ['a'] },
      errors: ['spec.secretName: Required value: must be specified'],
    },
    {
      name: 'not a DNS subdomain',
      spec: { secretName: 'Web_TLS', dnsNames: ['a'] },
      errors: [`spec.secretName: Invalid value: "Web_TLS": ${DNS1123}`],
    },
  ],
  issuerRef: [
    {
      name: 'missing name',
      spec: { issuerRef: { name: '' }, dnsNames: ['a'] },
      errors: ['spec.issuerRef.name: Required value: must be specified'],
    },
    {
      name: 'external kind without a group',
      spec: { issuerRef: { name: 'x', kind: 'AWSPCAClusterIssuer' }, dnsNames: ['a'] },
      errors: [
        'spec.issuerRef.kind: Invalid value: "AWSPCAClusterIssuer": must be one of Issuer or ClusterIssuer (did you forget to set spec.issuerRef.group?)',
      ],
    },
    {
      name: 'unknown kind in cert-manager.io',
      spec: { issuerRef: { name: 'x', kind: 'Foo', group: 'cert-manager.io' }, dnsNames: ['a'] },
      errors: ['spec.issuerRef.kind: Invalid value: "Foo": must be one of Issuer or ClusterIssuer'],
    },
    {
      name: 'any kind in an external group',
      spec: {
        issuerRef: { name: 'x', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' },
        dnsNames: ['a'],
      },
      errors: [],
    },
    {
      name: 'ClusterIssuer',
      spec: { issuerRef: { name: 'x', kind: 'ClusterIssuer' }, dnsNames: ['a'] },
      errors: [],
    },
  ],
  duration: [
    { name: '1h, the minimum', spec: { duration: '1h', dnsNames: ['a'] }, errors: [] },
    {
      name: 'under 1h',
      spec: { duration: '30m', dnsNames: ['a'] },
      errors: ['spec.duration: Invalid value: "30m0s": certificate duration must be greater than 1h0m0s'],
    },
    {
      name: 'not a Go duration',
      spec: { duration: '90 days', dnsNames: ['a'] },
      errors: ['spec.duration: Invalid value: "90 days": time: unknown unit " days" in duration "90 days"'],
    },
  ],
  renewBefore: [
    { name: '5m, the minimum', spec: { renewBefore: '5m', dnsNames: ['a'] }, errors: [] },
    {
      name: 'under 5m',
      spec: { renewBefore: '4m', dnsNames: ['a'] },
      errors: ['spec.renewBefore: Invalid value: "4m0s": certificate renewBefore must be greater than 5m0s'],
    },
    {
      name: 'not less than the duration',
      spec: { duration: '1h', renewBefore: '60m', dnsNames: ['a'] },
      errors: [
        'spec.renewBefore: Invalid value: "1h0m0s": certificate duration 1h0m0s must be greater than renewBefore 1h0m0s',
      ],
    },
    {
      name: 'not less than the default duration (90 days)',
      spec: { renewBefore: '2160h', dnsNames: ['a'] },
      errors: [
        'spec.renewBefore: Invalid value: "2160h0m0s": certificate duration 2160h0m0s must be greater than renewBefore 2160h0m0s',
      ],
    },
    {
      name: 'with renewBeforePercentage',
      spec: { renewBefore: '10m', renewBeforePercentage: 10, dnsNames: ['a'] },
      errors: [
        'spec.renewBefore: Invalid value: "10m0s": renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set',
        'spec.renewBeforePercentage: Invalid value: 10: renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set',
      ],
    },
  ],
  renewBeforePercentage: [
    { name: '50', spec: { renewBeforePercentage: 50, dnsNames: ['a'] }, errors: [] },
    { name: '99 of 90 days', spec: { renewBeforePercentage: 99, dnsNames: ['a'] }, errors: [] },
    {
      name: '0 (renewBefore would equal the duration)',
      spec: { renewBeforePercentage: 0, dnsNames: ['a'] },
      errors: [
        'spec.renewBeforePercentage: Invalid value: 0: certificate renewBeforePercentage must result in a renewBefore less than duration',
      ],
    },
    {
      name: '100 (renewBefore would be 0)',
      spec: { renewBeforePercentage: 100, dnsNames: ['a'] },
      errors: [
        'spec.renewBeforePercentage: Invalid value: 100: certificate renewBeforePercentage must result in a renewBefore greater than 5m0s',
      ],
    },
    {
      name: 'negative',
      spec: { renewBeforePercentage: -5, dnsNames: ['a'] },
      errors: [
        'spec.renewBeforePercentage: Invalid value: -5: certificate renewBeforePercentage must result in a renewBefore less than duration',
      ],
    },
    {
      name: 'resulting renewBefore under 5m (95% of 1h is 3m)',
      spec: { duration: '1h', renewBeforePercentage: 95, dnsNames: ['a'] },
      errors: [
        'spec.renewBeforePercentage: Invalid value: 95: certificate renewBeforePercentage must result in a renewBefore greater than 5m0s',
      ],
    },
  ],
  commonName: [
    { name: '64 bytes', spec: { commonName: 'a'.repeat(64) }, errors: [] },
    {
      name: '65 bytes',
      spec: { commonName: 'a'.repeat(65) },
      errors: ['spec.commonName: Too long: may not be more than 64 bytes'],
    },
    {
      name: 'over 64 bytes from a literalSubject CN',
      spec: { literalSubject: `CN=${'a'.repeat(65)}` },
      errors: ['spec.commonName: Too long: may not be more than 64 bytes'],
    },
  ],
  literalSubject: [
    {
      name: 'with commonName',
      spec: { literalSubject: 'CN=testcn', commonName: 'testcn' },
      errors: [
        'spec.commonName: Invalid value: "testcn": When providing a `LiteralSubject` no `commonName` may be provided.',
      ],
    },
    {
      name: 'with subject organizations',
      spec: { literalSubject: 'CN=testcn', subject: { organizations: ['US'] } },
      errors: [
        'spec.subject: Invalid value: {"organizations":["US"]}: When providing a `LiteralSubject` no `Subject` properties may be provided.',
      ],
    },
    {
      name: 'with only a subject serialNumber',
      spec: { literalSubject: 'CN=testcn', subject: { serialNumber: '1' } },
      errors: [
        'spec.subject: Invalid value: {"serialNumber":"1"}: When providing a `LiteralSubject` no `Subject` properties may be provided.',
      ],
    },
    {
      name: 'with an empty subject',
      spec: { literalSubject: 'CN=testcn', subject: {} },
      errors: [],
    },
    {
      name: 'escapes, multi-valued RDNs and every known key',
      spec: {
        literalSubject:
          'CN=James \\"Jim\\" Smith\\, III,DC=dc,DC=net,UID=jamessmith,STREET=La Rambla,L=Barcelona,C=Spain,O=Acme,OU=IT+OU=Admins,ST=CT,SERIALNUMBER=1',
      },
      errors: [],
    },
    { name: 'an OID key', spec: { literalSubject: '2.5.4.3=by-oid' }, errors: [] },
    {
      name: 'an unknown key',
      spec: { literalSubject: 'C=O,B=TX,CN=foo' },
      errors: [
        'spec.literalSubject: Invalid value: "C=O,B=TX,CN=foo": Literal subject contains unrecognized key with value [TX]',
      ],
    },
    {
      name: 'lower-case keys, unknown to cert-manager',
      spec: { literalSubject: 'cn=foo' },
      errors: [
        'spec.literalSubject: Invalid value: "cn=foo": Literal subject contains unrecognized key with value [foo]',
        AT_LEAST_ONE,
      ],
    },
    {
      name: 'not RFC 4514',
      spec: { literalSubject: 'CN' },
      errors: [
        'spec.literalSubject: Invalid value: "CN": DN ended with incomplete type, value pair',
        AT_LEAST_ONE,
      ],
    },
    {
      name: 'a bad escape',
      spec: { literalSubject: 'CN=Jim\\0Test' },
      errors: [
        `spec.literalSubject: Invalid value: "CN=Jim\\\\0Test": failed to decode escaped character: encoding/hex: invalid byte: U+0054 'T'`,
        AT_LEAST_ONE,
      ],
    },
  ],
  ipAddresses: [
    {
      name: 'IPv4 and IPv6',
      spec: { ipAddresses: ['192.0.2.1', '2001:db8::1', '::ffff:192.0.2.1'] },
      errors: [],
    },
    {
      name: 'out of range, zoned, leading zero',
      spec: { ipAddresses: ['10.0.0.256', 'fe80::1%eth0', '01.2.3.4'] },
      errors: [
        'spec.ipAddresses[0]: Invalid value: "10.0.0.256": invalid IP address',
        'spec.ipAddresses[1]: Invalid value: "fe80::1%eth0": invalid IP address',
        'spec.ipAddresses[2]: Invalid value: "01.2.3.4": invalid IP address',
      ],
    },
  ],
  emailAddresses: [
    {
      name: 'plain addresses',
      spec: { emailAddresses: ['a@example.com', 'first.last+tag@sub.example.com'] },
      errors: [],
    },
    {
      name: 'no @',
      spec: { emailAddresses: ['not-an-email'] },
      errors: [
        'spec.emailAddresses[0]: Invalid value: "not-an-email": invalid email address: mail: missing \'@\' or angle-addr',
      ],
    },
    {
      name: 'with a display name',
      spec: { emailAddresses: ['Jane <jane@example.com>'] },
      errors: [
        'spec.emailAddresses[0]: Invalid value: "Jane <jane@example.com>": invalid email address: make sure the supplied value only contains the email address itself',
      ],
    },
    {
      name: 'no domain',
      spec: { emailAddresses: ['jane@'] },
      errors: [
        'spec.emailAddresses[0]: Invalid value: "jane@": invalid email address: mail: no domain in addr-spec',
      ],
    },
  ],
  uris: [
    {
      name: 'absolute URIs',
      spec: { uris: ['spiffe://cluster.local/ns/a/sa/b', 'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66'] },
      errors: [],
    },
    {
      name: 'relative, bad escape, control character',
      spec: { uris: ['/relative/path', 'https://example.com/%zz', 'https://example.com/\u0007'] },
      errors: [
        'spec.uris[0]: Invalid value: "/relative/path": invalid URI: must be an absolute URI with a scheme',
        'spec.uris[1]: Invalid value: "https://example.com/%zz": invalid URI: invalid URL escape "%zz"',
        'spec.uris[2]: Invalid value: "https://example.com/\\a": invalid URI: net/url: invalid control character in URL',
      ],
    },
  ],
  otherNames: [
    {
      name: 'missing oid and value',
      spec: { otherNames: [{}] },
      errors: [
        'spec.otherNames[0].oid: Required value: must be specified',
        'spec.otherNames[0].oid: Invalid value: "": invalid oid syntax',
        'spec.otherNames[0].utf8Value: Required value: must be set to a valid non-empty UTF8 string',
      ],
    },
    {
      name: 'bad oid',
      spec: { otherNames: [{ oid: '1.2.a', utf8Value: 'x' }] },
      errors: ['spec.otherNames[0].oid: Invalid value: "1.2.a": invalid oid syntax'],
    },
  ],
  privateKey: [
    { name: 'RSA 8192', spec: { dnsNames: ['a'], privateKey: { algorithm: 'RSA', size: 8192 } }, errors: [] },
    {
      name: 'RSA 1024',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'RSA', size: 1024 } },
      errors: [
        'spec.privateKey.size: Invalid value: 1024: must be between 2048 and 8192 for rsa keyAlgorithm',
      ],
    },
    {
      name: 'RSA by default, 16384',
      spec: { dnsNames: ['a'], privateKey: { size: 16384 } },
      errors: [
        'spec.privateKey.size: Invalid value: 16384: must be between 2048 and 8192 for rsa keyAlgorithm',
      ],
    },
    {
      name: 'ECDSA 521',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'ECDSA', size: 521 } },
      errors: [],
    },
    {
      name: 'ECDSA 512',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'ECDSA', size: 512 } },
      errors: ['spec.privateKey.size: Unsupported value: 512: supported values: "256", "384", "521"'],
    },
    {
      name: 'Ed25519 ignores size',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'Ed25519', size: 1 } },
      errors: [],
    },
    {
      name: 'RSA -1 (upstream would take it for the default)',
      spec: { dnsNames: ['a'], privateKey: { size: -1 } },
      errors: ['spec.privateKey.size: Invalid value: -1: must be between 2048 and 8192 for rsa keyAlgorithm'],
    },
    {
      name: 'ECDSA -256',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'ECDSA', size: -256 } },
      errors: ['spec.privateKey.size: Unsupported value: -256: supported values: "256", "384", "521"'],
    },
    {
      name: 'Ed25519 -1',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'Ed25519', size: -1 } },
      errors: ['spec.privateKey.size: Invalid value: -1: must not be negative'],
    },
    {
      name: 'size 0 is unset',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'ECDSA', size: 0 } },
      errors: [],
    },
    {
      name: 'unknown algorithm',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'DSA' as 'RSA' } },
      errors: [
        'spec.privateKey.algorithm: Invalid value: "DSA": must be either empty or one of rsa, ecdsa or ed25519',
      ],
    },
    {
      name: 'encoding and rotationPolicy',
      spec: {
        dnsNames: ['a'],
        privateKey: { encoding: 'PKCS12' as 'PKCS1', rotationPolicy: 'Sometimes' as 'Never' },
      },
      errors: [
        'spec.privateKey.encoding: Unsupported value: "PKCS12": supported values: "PKCS1", "PKCS8"',
        'spec.privateKey.rotationPolicy: Unsupported value: "Sometimes": supported values: "Never", "Always"',
      ],
    },
    {
      name: 'PKCS8, Never',
      spec: { dnsNames: ['a'], privateKey: { encoding: 'PKCS8', rotationPolicy: 'Never' } },
      errors: [],
    },
  ],
  signatureAlgorithm: [
    {
      name: 'RSA default with SHA512WithRSA',
      spec: { dnsNames: ['a'], signatureAlgorithm: 'SHA512WithRSA' },
      errors: [],
    },
    {
      name: 'RSA default with ECDSAWithSHA256',
      spec: { dnsNames: ['a'], signatureAlgorithm: 'ECDSAWithSHA256' },
      errors: [
        'spec.signatureAlgorithm: Invalid value: "ECDSAWithSHA256": for key algorithm RSA the allowed signature algorithms are [SHA256WithRSA SHA384WithRSA SHA512WithRSA]',
      ],
    },
    {
      name: 'ECDSA with SHA256WithRSA',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'ECDSA' }, signatureAlgorithm: 'SHA256WithRSA' },
      errors: [
        'spec.signatureAlgorithm: Invalid value: "SHA256WithRSA": for key algorithm ECDSA the allowed signature algorithms are [ECDSAWithSHA256 ECDSAWithSHA384 ECDSAWithSHA512]',
      ],
    },
    {
      name: 'Ed25519 with PureEd25519',
      spec: { dnsNames: ['a'], privateKey: { algorithm: 'Ed25519' }, signatureAlgorithm: 'PureEd25519' },
      errors: [],
    },
    {
      name: 'unknown',
      spec: { dnsNames: ['a'], signatureAlgorithm: 'MD5WithRSA' as 'SHA256WithRSA' },
      errors: [
        'spec.signatureAlgorithm: Unsupported value: "MD5WithRSA": supported values: "SHA256WithRSA", "SHA384WithRSA", "SHA512WithRSA", "ECDSAWithSHA256", "ECDSAWithSHA384", "ECDSAWithSHA512", "PureEd25519"',
      ],
    },
  ],
  usages: [
    {
      name: 'known',
      spec: { dnsNames: ['a'], usages: ['digital signature', 'server auth', 's/mime'] },
      errors: [],
    },
    {
      name: 'unknown',
      spec: { dnsNames: ['a'], usages: ['digital signature', 'serverAuth' as 'server auth'] },
      errors: ['spec.usages[1]: Invalid value: "serverAuth": unknown keyusage'],
    },
  ],
  revisionHistoryLimit: [
    { name: '1', spec: { dnsNames: ['a'], revisionHistoryLimit: 1 }, errors: [] },
    {
      name: '0',
      spec: { dnsNames: ['a'], revisionHistoryLimit: 0 },
      errors: ['spec.revisionHistoryLimit: Invalid value: 0: must not be less than 1'],
    },
  ],
  secretTemplate: [
    {
      name: 'plain labels and annotations, and allow-direct-injection',
      spec: {
        dnsNames: ['a'],
        secretTemplate: {
          labels: { 'app.kubernetes.io/name': 'web' },
          annotations: { 'example.com/owner': 'me', 'cert-manager.io/allow-direct-injection': 'true' },
        },
      },
      errors: [],
    },
    {
      name: 'a cert-manager.io annotation',
      spec: { dnsNames: ['a'], secretTemplate: { annotations: { 'cert-manager.io/common-name': 'fake' } } },
      errors: [
        'spec.secretTemplate.annotations: Invalid value: "cert-manager.io/common-name": cert-manager.io/* annotations are not allowed',
      ],
    },
    {
      name: 'a bad label value',
      spec: { dnsNames: ['a'], secretTemplate: { labels: { app: 'not valid!' } } },
      errors: [
        `spec.secretTemplate.labels: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ],
    },
  ],
  nameConstraints: [
    {
      name: 'on a CA',
      spec: {
        dnsNames: ['a'],
        isCA: true,
        nameConstraints: { permitted: { ipRanges: ['10.0.0.0/8', '2001:db8::/32'] } },
      },
      errors: [],
    },
    {
      name: 'on a leaf, empty, with a bad CIDR',
      spec: { dnsNames: ['a'], nameConstraints: { critical: true, excluded: { ipRanges: ['10.0.0.0/33'] } } },
      errors: [
        'spec.nameConstraints: Invalid value: {"critical":true,"excluded":{"ipRanges":["10.0.0.0/33"]}}: isCA should be true when nameConstraints is set',
        'spec.nameConstraints.excluded.ipRanges[0]: Invalid value: "10.0.0.0/33": invalid CIDR address',
      ],
    },
    {
      name: 'names that are not IA5Strings',
      spec: {
        dnsNames: ['a'],
        isCA: true,
        nameConstraints: { permitted: { dnsDomains: ['ok.example', 'bücher.example'], uriDomains: ['é'] } },
      },
      errors: [
        'spec.nameConstraints.permitted.dnsDomains[1]: Invalid value: "bücher.example": x509: "bücher.example" cannot be encoded as an IA5String',
        'spec.nameConstraints.permitted.uriDomains[0]: Invalid value: "é": x509: "é" cannot be encoded as an IA5String',
      ],
    },
    {
      name: 'neither permitted nor excluded',
      spec: { dnsNames: ['a'], isCA: true, nameConstraints: { critical: true } },
      errors: [
        'spec.nameConstraints: Invalid value: {"critical":true}: either permitted or excluded must be set',
      ],
    },
  ],
  additionalOutputFormats: [
    {
      name: 'DER and CombinedPEM',
      spec: { dnsNames: ['a'], additionalOutputFormats: [{ type: 'DER' }, { type: 'CombinedPEM' }] },
      errors: [],
    },
    {
      name: 'a duplicate',
      spec: { dnsNames: ['a'], additionalOutputFormats: [{ type: 'DER' }, { type: 'DER' }] },
      errors: ['spec.additionalOutputFormats[type]: Duplicate value: "DER"'],
    },
  ],
  keystores: [
    {
      name: 'a password or a passwordSecretRef',
      spec: {
        dnsNames: ['a'],
        keystores: {
          jks: { create: true, password: 'changeit' },
          pkcs12: { create: true, passwordSecretRef: { name: 'p', key: 'k' }, profile: 'Modern2023' },
        },
      },
      errors: [],
    },
    {
      name: 'both, neither, empty',
      spec: {
        dnsNames: ['a'],
        keystores: {
          jks: { create: true, password: 'x', passwordSecretRef: { name: 'p' } },
          pkcs12: { create: true },
        },
      },
      errors: [
        'spec.keystores.jks: Forbidden: exactly one of passwordSecretRef and password must be provided for JKS keystores; cannot set both',
        'spec.keystores.pkcs12: Forbidden: must set exactly one of passwordSecretRef and password must for PKCS#12 keystores',
      ],
    },
    {
      name: 'an empty literal password',
      spec: { dnsNames: ['a'], keystores: { pkcs12: { create: true, password: '' } } },
      errors: [
        'spec.keystores.pkcs12.password: Forbidden: literal password cannot be empty if set on PKCS#12 keystores',
      ],
    },
  ],
  renewal: [
    {
      name: 'RenewBefore with a window',
      spec: {
        dnsNames: ['a'],
        renewal: {
          policy: 'RenewBefore',
          windows: [{ timezone: 'Europe/Paris', windowDuration: '2h', cron: '0 2 * * mon-fri' }],
        },
      },
      errors: [],
    },
    { name: 'Disabled', spec: { dnsNames: ['a'], renewal: { policy: 'Disabled' } }, errors: [] },
    {
      name: 'Disabled with windows',
      spec: {
        dnsNames: ['a'],
        renewal: { policy: 'Disabled', windows: [{ windowDuration: '1h', cron: '@daily' }] },
      },
      errors: [
        'spec.renewal.windows: Forbidden: windows cannot be set when `renewal.policy` is set to Disabled',
      ],
    },
    {
      name: 'no policy, no windowDuration, bad cron',
      spec: { dnsNames: ['a'], renewal: { windows: [{ cron: '61 * * * *' }] } },
      errors: [
        'spec.renewal.policy: Unsupported value: "": supported values: "Disabled", "RenewBefore"',
        'spec.renewal.windows[0].windowDuration: Required value: windowDuration must be specified and should be greater than 0',
        'spec.renewal.windows[0].cron: Invalid value: "61 * * * *": invalid cron syntax: failed to parse cron spec \'61 * * * *\': end of range (61) above maximum (59): 61. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow',
      ],
    },
    {
      name: 'a bad time zone',
      spec: {
        dnsNames: ['a'],
        renewal: {
          policy: 'RenewBefore',
          windows: [{ timezone: 'Mars/Olympus', windowDuration: '1h', cron: '@daily' }],
        },
      },
      errors: [
        'spec.renewal.windows[0].timezone: Invalid value: "Mars/Olympus": invalid value for timezone. timezone must be IANA compliant',
        'spec.renewal.windows[0].cron: Invalid value: "@daily": invalid cron syntax: failed to parse cron spec \'@daily\': provided bad location Mars/Olympus: unknown time zone Mars/Olympus. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow',
      ],
    },
  ],
  cleanupPolicy: [
    { name: 'OnDelete', spec: { dnsNames: ['a'], cleanupPolicy: 'OnDelete' }, errors: [] },
    { name: 'Never', spec: { dnsNames: ['a'], cleanupPolicy: 'Never' }, errors: [] },
    {
      name: 'anything else',
      spec: { dnsNames: ['a'], cleanupPolicy: 'Always' as 'Never' },
      errors: ['spec.cleanupPolicy: Unsupported value: "Always": supported values: "OnDelete", "Never"'],
    },
  ],
};

describe('validateCertificate', () => {
  for (const [rule, rows] of Object.entries(certificateRules)) {
    describe(rule, () => {
      for (const row of rows) {
        it(row.errors.length === 0 ? `accepts ${row.name}` : `rejects ${row.name}`, () => {
          assert.deepEqual(messages(validateCertificate(certificate(row.spec))), row.errors);
        });
      }
    });
  }

  it('accepts the valid example Certificate', () => {
    assert.deepEqual(messages(validateCertificate(example('Certificate', 'web') as Certificate)), []);
  });

  it('applies the same rules on update', () => {
    const old = certificate({ dnsNames: ['a'] });
    assert.deepEqual(messages(validateCertificate(certificate({ dnsNames: ['a', 'b'] }), old)), []);
    assert.deepEqual(messages(validateCertificate(certificate({}), old)), [AT_LEAST_ONE]);
  });

  it('requires a spec', () => {
    const cert = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'x' },
    } as Certificate;
    assert.deepEqual(messages(validateCertificate(cert)), ['spec: Required value']);
  });

  it('renders as the 422 kube-apiserver returns for a webhook denial', () => {
    const errors = validateCertificate(certificate({ dnsNames: ['a'], cleanupPolicy: 'Always' as 'Never' }));
    const status = newInvalid('cert-manager.io', 'Certificate', 'test', errors).status;
    assert.equal(status.code, 422);
    assert.equal(
      status.message,
      'Certificate.cert-manager.io "test" is invalid: spec.cleanupPolicy: Unsupported value: "Always": supported values: "OnDelete", "Never"',
    );
    assert.deepEqual(status.details?.causes, [
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Always": supported values: "OnDelete", "Never"',
        field: 'spec.cleanupPolicy',
      },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------

function certificateRequest(
  spec: Partial<CertificateRequest['spec']> = {},
  extra: Partial<CertificateRequest> = {},
): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name: 'test-1',
      namespace: 'default',
      annotations: { 'cert-manager.io/certificate-name': 'test' },
    },
    spec: { issuerRef: { name: 'ca-issuer' }, request: base64(ECDSA_CSR), ...spec },
    ...extra,
  };
}

/** The CSR with the last octet of its signature flipped: well-formed, but no longer signed by its key. */
function tamperedCsr(pem: string): string {
  const body = pem.replace(/-----[^-]+-----/g, '').replace(/\s/g, '');
  const der = Buffer.from(body, 'base64');
  der[der.length - 1] ^= 0x01;
  const lines = der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${lines}\n-----END CERTIFICATE REQUEST-----\n`;
}

const condition = (type: string, status: 'True' | 'False' = 'True') => ({
  type,
  status,
  reason: 'r',
  message: 'm',
});

describe('validateCertificateRequest', () => {
  const createRows: { name: string; cr: CertificateRequest; errors: string[] }[] = [
    { name: 'an ECDSA CSR', cr: certificateRequest(), errors: [] },
    { name: 'an RSA CSR', cr: certificateRequest({ request: base64(RSA_CSR) }), errors: [] },
    { name: 'an Ed25519 CSR', cr: certificateRequest({ request: base64(ED25519_CSR) }), errors: [] },
    {
      name: 'no request',
      cr: certificateRequest({ request: '' }),
      errors: ['spec.request: Required value: must be specified'],
    },
    {
      name: 'a request that is not PEM',
      cr: certificateRequest({ request: base64('hello') }),
      errors: [
        'spec.request: Invalid value: "hello": error decoding certificate request PEM block: no PEM data was found in given input',
      ],
    },
    {
      name: 'a request whose signature does not verify',
      cr: certificateRequest({ request: base64(tamperedCsr(ECDSA_CSR)) }),
      errors: [
        `spec.request: Invalid value: ${JSON.stringify(tamperedCsr(ECDSA_CSR).slice(0, 97) + '...')}: x509: ECDSA verification failure`,
      ],
    },
    {
      name: 'a truncated request',
      cr: certificateRequest({
        request: base64(
          '-----BEGIN CERTIFICATE REQUEST-----\nMIIBCjCBsgIBADAW\n-----END CERTIFICATE REQUEST-----\n',
        ),
      }),
      errors: [
        'spec.request: Invalid value: "-----BEGIN CERTIFICATE REQUEST-----\\nMIIBCjCBsgIBADAW\\n-----END CERTIFICATE REQUEST-----\\n": asn1: syntax error: data truncated',
      ],
    },
    {
      name: 'an unknown usage',
      cr: certificateRequest({ usages: ['digital signature', 'foo' as 'any'] }),
      errors: ['spec.usages: Invalid value: ["digital signature","foo"]: unknown key usages: [foo]'],
    },
    {
      name: 'no issuer name',
      cr: certificateRequest({ issuerRef: { name: '' } }),
      errors: ['spec.issuerRef.name: Required value: must be specified'],
    },
    {
      name: 'Approved',
      cr: certificateRequest(
        {},
        { status: { conditions: [condition('Approved'), condition('Ready', 'False')] } },
      ),
      errors: [],
    },
    {
      name: 'Approved=False',
      cr: certificateRequest({}, { status: { conditions: [condition('Approved', 'False')] } }),
      errors: [
        'status.conditions.Approved: Invalid value: "False": "Approved" condition may only be set to True',
      ],
    },
    {
      name: 'Approved and Denied',
      cr: certificateRequest({}, { status: { conditions: [condition('Approved'), condition('Denied')] } }),
      errors: ["status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist"],
    },
    {
      name: 'two Denied',
      cr: certificateRequest({}, { status: { conditions: [condition('Denied'), condition('Denied')] } }),
      errors: ['status.conditions: Forbidden: multiple "Denied" conditions present'],
    },
  ];
  for (const row of createRows) {
    it(row.errors.length === 0 ? `accepts ${row.name}` : `rejects ${row.name}`, () => {
      assert.deepEqual(messages(validateCertificateRequest(row.cr)), row.errors);
    });
  }

  it('accepts the example CertificateRequest', () => {
    assert.deepEqual(
      messages(validateCertificateRequest(example('CertificateRequest', 'web-1') as CertificateRequest)),
      [],
    );
  });

  describe('on update', () => {
    const old = certificateRequest({ usages: ['digital signature'] });
    const updateRows: { name: string; cr: CertificateRequest; old?: CertificateRequest; errors: string[] }[] =
      [
        {
          name: 'an unchanged spec with new labels',
          cr: { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } },
          errors: [],
        },
        {
          name: 'isCA: false, the zero value, added',
          cr: certificateRequest({ usages: ['digital signature'], isCA: false }),
          errors: [],
        },
        {
          name: 'a changed spec',
          cr: certificateRequest({ usages: ['digital signature', 'server auth'] }),
          errors: ['spec: Forbidden: cannot change spec after creation'],
        },
        {
          name: 'a changed cert-manager annotation',
          cr: {
            ...old,
            metadata: { ...old.metadata, annotations: { 'cert-manager.io/certificate-name': 'other' } },
          },
          errors: [
            'metadata.annotations.cert-manager.io/certificate-name: Forbidden: cannot change cert-manager annotation after creation',
            'metadata.annotations.cert-manager.io/certificate-name: Forbidden: cannot change cert-manager annotation after creation',
          ],
        },
        {
          name: 'an added cert-manager annotation',
          cr: {
            ...old,
            metadata: {
              ...old.metadata,
              annotations: { ...old.metadata.annotations, 'cert-manager.io/certificate-revision': '2' },
            },
          },
          errors: [
            'metadata.annotations.cert-manager.io/certificate-revision: Forbidden: cannot change cert-manager annotation after creation',
          ],
        },
        {
          name: 'approval of a pending request',
          cr: { ...old, status: { conditions: [condition('Approved')] } },
          errors: [],
        },
        {
          name: 'a modified Approved condition',
          old: { ...old, status: { conditions: [condition('Approved')] } },
          cr: { ...old, status: { conditions: [{ ...condition('Approved'), message: 'changed' }] } },
          errors: ["status.conditions: Forbidden: 'Approved' condition may not be modified once set"],
        },
        {
          name: 'a denied request turned approved',
          old: { ...old, status: { conditions: [condition('Denied')] } },
          cr: { ...old, status: { conditions: [condition('Approved')] } },
          errors: ["status.conditions: Forbidden: 'Denied' condition may not be modified once set"],
        },
      ];
    for (const row of updateRows) {
      it(row.errors.length === 0 ? `accepts ${row.name}` : `rejects ${row.name}`, () => {
        assert.deepEqual(messages(validateCertificateRequest(row.cr, row.old ?? old)), row.errors);
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------

function issuer(spec: Record<string, unknown>): Issuer {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'i', namespace: 'default' },
    spec,
  };
}

const acmeBase = {
  server: 'https://acme.example.com/directory',
  privateKeySecretRef: { name: 'acme-key' },
  solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
};

const issuerRows: { name: string; spec: Record<string, unknown>; errors: string[] }[] = [
  { name: 'selfSigned', spec: { selfSigned: {} }, errors: [] },
  { name: 'ca', spec: { ca: { secretName: 'ca-key-pair' } }, errors: [] },
  {
    name: 'no issuer type',
    spec: {},
    errors: ['spec: Required value: at least one issuer must be configured'],
  },
  {
    name: 'two issuer types',
    spec: { ca: { secretName: 'ca' }, selfSigned: {} },
    errors: ['spec.selfSigned: Forbidden: may not specify more than one issuer type'],
  },
  {
    name: 'three issuer types',
    spec: { acme: acmeBase, ca: { secretName: 'ca' }, selfSigned: {} },
    errors: [
      'spec.ca: Forbidden: may not specify more than one issuer type',
      'spec.selfSigned: Forbidden: may not specify more than one issuer type',
    ],
  },
  { name: 'ca without secretName', spec: { ca: {} }, errors: ['spec.ca.secretName: Required value'] },
  {
    name: 'ca with empty URLs',
    spec: { ca: { secretName: 'ca', ocspServers: [''], issuingCertificateURLs: [''] } },
    errors: [
      'spec.ca.ocspServers[0]: Invalid value: "": must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org',
      'spec.ca.issuingCertificateURLs[0]: Invalid value: "": must be a valid URL',
    ],
  },
  { name: 'acme', spec: { acme: { ...acmeBase, caBundle: base64(CA_CERT) } }, errors: [] },
  {
    name: 'acme without server or account key',
    spec: { acme: { solvers: [] } },
    errors: [
      'spec.acme.privateKeySecretRef.name: Required value: private key secret name is a required field',
      'spec.acme.server: Required value: acme server URL is a required field',
    ],
  },
  {
    name: 'acme with caBundle and skipTLSVerify, and a bundle without certificates',
    spec: { acme: { ...acmeBase, caBundle: base64('nothing'), skipTLSVerify: true } },
    errors: [
      'spec.acme.caBundle: Invalid value: "": caBundle and skipTLSVerify are mutually exclusive and cannot both be set',
      'spec.acme.skipTLSVerify: Invalid value: true: caBundle and skipTLSVerify are mutually exclusive and cannot both be set',
      'spec.acme.caBundle: Invalid value: "": cert bundle didn\'t contain any valid certificates',
    ],
  },
  {
    name: 'acme solvers: none configured, two DNS providers, two HTTP01 types',
    spec: {
      acme: {
        ...acmeBase,
        externalAccountBinding: { keySecretRef: { name: 'eab' } },
        solvers: [
          {},
          { dns01: { cloudflare: {}, route53: {} } },
          { http01: { ingress: {}, gatewayHTTPRoute: {} } },
        ],
      },
    },
    errors: [
      'spec.acme.externalAccountBinding.keyID: Required value: the keyID field is required when using externalAccountBinding',
      'spec.acme.externalAccountBinding.keySecretRef.key: Required value: secret key is required',
      'spec.acme.solvers[0]: Required value: no solver type configured',
      'spec.acme.solvers[1].dns01.cloudflare: Required value: apiKeySecretRef or apiTokenSecretRef is required',
      'spec.acme.solvers[1].dns01.route53: Forbidden: may not specify more than one provider type',
      'spec.acme.solvers[2].http01: Required value: only 1 HTTP01 solver type may be configured',
    ],
  },
  {
    name: 'acme rfc2136 solvers: valid, and each rule broken',
    spec: {
      acme: {
        ...acmeBase,
        solvers: [
          {
            dns01: {
              rfc2136: {
                nameserver: '[2001:db8::1]:53',
                tsigKeyName: 'k',
                tsigAlgorithm: 'hmacsha384',
                tsigSecretSecretRef: { name: 's', key: 'k' },
              },
            },
          },
          { dns01: { rfc2136: { nameserver: '10.0.0.1' } } },
          { dns01: { rfc2136: { tsigAlgorithm: 'HMAC-SHA256', tsigKeyName: 'k', tsigSecretSecretRef: {} } } },
          { dns01: { rfc2136: { nameserver: '2001:db8::1', tsigSecretSecretRef: { name: 's', key: 'k' } } } },
        ],
      },
    },
    errors: [
      'spec.acme.solvers[2].dns01.rfc2136.nameserver: Required value',
      'spec.acme.solvers[2].dns01.rfc2136.tsigAlgorithm: Unsupported value: "HMAC-SHA256": supported values: "HMACMD5", "HMACSHA1", "HMACSHA224", "HMACSHA256", "HMACSHA384", "HMACSHA512"',
      'spec.acme.solvers[2].dns01.rfc2136.tsigSecretSecretRef.name: Required value: secret name is required',
      'spec.acme.solvers[2].dns01.rfc2136.tsigSecretSecretRef.key: Required value: secret key is required',
      'spec.acme.solvers[3].dns01.rfc2136.nameserver: Invalid value: "2001:db8::1": nameserver must be set in the form host:port where host is an IPv4 address, an enclosed IPv6 address or a hostname and port is an optional port number.',
      'spec.acme.solvers[3].dns01.rfc2136.tsigKeyName: Required value',
    ],
  },
  {
    name: 'vault',
    spec: { vault: { server: 'https://vault', path: 'pki/sign/r', auth: { tokenSecretRef: { name: 't' } } } },
    errors: [],
  },
  {
    name: 'vault without auth, with a .. path',
    spec: { vault: { server: 'https://vault', path: 'pki/../sys', auth: {} } },
    errors: [
      'spec.vault.path: Invalid value: "pki/../sys": must not contain \'..\' path segments',
      'spec.vault.auth: Required value: please supply one of: appRole, kubernetes, tokenSecretRef, clientCertificate, aws',
    ],
  },
  {
    name: 'vault kubernetes auth with both token sources',
    spec: {
      vault: {
        server: 'https://vault',
        path: 'pki/sign/r',
        auth: { kubernetes: { role: 'r', secretRef: { name: 's' }, serviceAccountRef: { name: 'sa' } } },
      },
    },
    errors: ['spec.vault.auth.kubernetes: Forbidden: please supply one of: secretRef, serviceAccountRef'],
  },
  {
    name: 'venafi without a connection',
    spec: { venafi: { zone: 'z' } },
    errors: ['spec.venafi: Required value: please supply one of: tpp, cloud, ngts'],
  },
  {
    name: 'venafi with two connections',
    spec: {
      venafi: {
        zone: 'z',
        cloud: { apiTokenSecretRef: { name: 'c' } },
        ngts: { tsgID: '1', credentialsRef: { name: 'n' } },
      },
    },
    errors: ['spec.venafi: Forbidden: please supply one of: tpp, cloud, ngts'],
  },
];

describe('validateIssuer and validateClusterIssuer', () => {
  for (const row of issuerRows) {
    it(row.errors.length === 0 ? `accepts ${row.name}` : `rejects ${row.name}`, () => {
      assert.deepEqual(messages(validateIssuer(issuer(row.spec))), row.errors);
      const cluster: ClusterIssuer = { ...issuer(row.spec), kind: 'ClusterIssuer', metadata: { name: 'i' } };
      assert.deepEqual(messages(validateClusterIssuer(cluster)), row.errors);
    });
  }

  it('accepts every issuer in the documentation-style examples', () => {
    for (const { object } of [...examplesOfKind('Issuer'), ...examplesOfKind('ClusterIssuer')]) {
      if (object.metadata.name.endsWith('every-field')) continue;
      assert.deepEqual(messages(validateIssuer(object as Issuer)), [], object.metadata.name);
    }
  });
});
