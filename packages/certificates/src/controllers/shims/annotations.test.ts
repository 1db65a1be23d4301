import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateSpec } from '../../api/types.ts';
import { hasShimAnnotation, isShimAnnotationKey, parseGoBool } from './annotation-keys.ts';
import {
  applyCertificateAnnotations,
  extraAnnotations,
  InvalidAnnotationError,
  issuerFor,
  issuerSpecificAnnotations,
  splitWithEscapeCSV,
} from './annotations.ts';
import { DEFAULT_SHIM_OPTIONS } from './options.ts';

const base = (): CertificateSpec => ({
  secretName: 'web-tls',
  issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
  dnsNames: ['web.example.com'],
  usages: ['digital signature', 'key encipherment'],
});

const applied = (annotations: Record<string, string>) => {
  const spec = base();
  applyCertificateAnnotations(spec, annotations);
  return spec;
};

/** The error applyCertificateAnnotations throws for `annotations`, which must be an InvalidAnnotationError. */
const failure = (annotations: Record<string, string>) => {
  try {
    applied(annotations);
  } catch (err) {
    assert.ok(err instanceof InvalidAnnotationError, String(err));
    return err.message;
  }
  assert.fail(`no error for ${JSON.stringify(annotations)}`);
};

describe('which objects the shims take', () => {
  it('issuer or cluster-issuer (any value), or an auto annotation that parses as a Go true', () => {
    const auto = DEFAULT_SHIM_OPTIONS.autoCertificateAnnotations;
    assert.equal(hasShimAnnotation({ 'cert-manager.io/issuer': '' }, auto), true);
    assert.equal(hasShimAnnotation({ 'cert-manager.io/cluster-issuer': 'x' }, auto), true);
    for (const yes of ['true', 'True', 'TRUE', 't', '1'])
      assert.equal(hasShimAnnotation({ 'kubernetes.io/tls-acme': yes }, auto), true, yes);
    for (const no of ['false', 'yes', '', 'on'])
      assert.equal(hasShimAnnotation({ 'kubernetes.io/tls-acme': no }, auto), false, no);
    // Gateways get no auto annotations.
    assert.equal(hasShimAnnotation({ 'kubernetes.io/tls-acme': 'true' }, []), false);
    // issuer-kind or issuer-group alone do not, as in cert-manager's code.
    assert.equal(hasShimAnnotation({ 'cert-manager.io/issuer-kind': 'ClusterIssuer' }, auto), false);
    assert.equal(hasShimAnnotation(undefined, auto), false);
    assert.equal(parseGoBool('maybe'), undefined);
  });

  it('keeps in the caches the cert-manager annotations, the auto ones and the extra ones only', () => {
    const options = { autoCertificateAnnotations: ['a/auto'], extraCertificateAnnotations: ['b/extra'] };
    for (const key of [
      'cert-manager.io/duration',
      'acme.cert-manager.io/http01-edit-in-place',
      'a/auto',
      'b/extra',
    ])
      assert.equal(isShimAnnotationKey(key, options), true, key);
    for (const key of [
      'kubectl.kubernetes.io/last-applied-configuration',
      'nginx.ingress.kubernetes.io/rewrite',
    ])
      assert.equal(isShimAnnotationKey(key, options), false, key);
  });
});

describe('issuerFor: the issuer of the Certificates', () => {
  const defaults = DEFAULT_SHIM_OPTIONS;

  it('issuer is an Issuer, cluster-issuer a ClusterIssuer; issuer-kind and issuer-group override', () => {
    assert.deepEqual(issuerFor({ 'cert-manager.io/issuer': 'ca' }, defaults), {
      name: 'ca',
      kind: 'Issuer',
      group: 'cert-manager.io',
    });
    assert.deepEqual(issuerFor({ 'cert-manager.io/cluster-issuer': 'le' }, defaults), {
      name: 'le',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    assert.deepEqual(
      issuerFor(
        {
          'cert-manager.io/issuer': 'aws',
          'cert-manager.io/issuer-kind': 'AWSPCAIssuer',
          'cert-manager.io/issuer-group': 'awspca.cert-manager.io',
        },
        defaults,
      ),
      { name: 'aws', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' },
    );
  });

  it('falls back to --default-issuer-name/-kind/-group (kubernetes.io/tls-acme alone)', () => {
    const withDefault = {
      ...defaults,
      defaultIssuerName: 'letsencrypt',
      defaultIssuerKind: 'ClusterIssuer',
    };
    assert.deepEqual(issuerFor({ 'kubernetes.io/tls-acme': 'true' }, withDefault), {
      name: 'letsencrypt',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
  });

  it('refuses contradictions and a missing name, with cert-manager’s messages joined', () => {
    assert.throws(() => issuerFor({ 'kubernetes.io/tls-acme': 'true' }, defaults), {
      message: 'failed to determine issuer name to be used for ingress resource',
    });
    assert.throws(
      () => issuerFor({ 'cert-manager.io/issuer': 'a', 'cert-manager.io/cluster-issuer': 'b' }, defaults),
      { message: 'both "cert-manager.io/issuer" and "cert-manager.io/cluster-issuer" may not be set' },
    );
    assert.throws(
      () =>
        issuerFor(
          {
            'cert-manager.io/cluster-issuer': 'b',
            'cert-manager.io/issuer-group': 'g',
            'cert-manager.io/issuer-kind': 'K',
          },
          defaults,
        ),
      {
        message:
          'both "cert-manager.io/cluster-issuer" and "cert-manager.io/issuer-group" may not be set, ' +
          'both "cert-manager.io/cluster-issuer" and "cert-manager.io/issuer-kind" may not be set',
      },
    );
  });
});

describe('applyCertificateAnnotations: the Certificate fields annotations set', () => {
  it('sets every field upstream maps, in the Certificate’s spelling', () => {
    const spec = applied({
      'cert-manager.io/common-name': 'web.example.com',
      'cert-manager.io/alt-names': 'alt.example.com,other.example.com',
      'cert-manager.io/ip-sans': '10.0.0.1, ::1',
      'cert-manager.io/email-sans': 'ops@example.com, web@example.com',
      'cert-manager.io/subject-organizations': '"Example, Inc.",Other',
      'cert-manager.io/subject-organizationalunits': 'Web',
      'cert-manager.io/subject-countries': 'GB',
      'cert-manager.io/subject-provinces': 'London',
      'cert-manager.io/subject-localities': 'Westminster',
      'cert-manager.io/subject-postalcodes': 'SW1A 2AA',
      'cert-manager.io/subject-streetaddresses': '"10 Downing Street, Westminster"',
      'cert-manager.io/subject-serialnumber': '1234',
      'cert-manager.io/duration': '2160h',
      'cert-manager.io/renew-before': '360h30m',
      'cert-manager.io/renew-before-percentage': '30',
      'cert-manager.io/usages': 'digital signature, server auth,client auth',
      'cert-manager.io/revision-history-limit': '3',
      'cert-manager.io/private-key-algorithm': 'ECDSA',
      'cert-manager.io/private-key-size': '384',
      'cert-manager.io/private-key-encoding': 'PKCS8',
      'cert-manager.io/private-key-rotation-policy': 'Never',
      'cert-manager.io/secret-template': '{"labels":{"team":"web"},"annotations":{"owner":"ops"}}',
    });
    assert.deepEqual(spec, {
      secretName: 'web-tls',
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      commonName: 'web.example.com',
      dnsNames: ['web.example.com', 'alt.example.com', 'other.example.com'],
      ipAddresses: ['10.0.0.1', '::1'],
      emailAddresses: ['ops@example.com', 'web@example.com'],
      subject: {
        organizations: ['Example, Inc.', 'Other'],
        organizationalUnits: ['Web'],
        countries: ['GB'],
        provinces: ['London'],
        localities: ['Westminster'],
        postalCodes: ['SW1A 2AA'],
        streetAddresses: ['10 Downing Street, Westminster'],
        serialNumber: '1234',
      },
      duration: '2160h0m0s',
      renewBefore: '360h30m0s',
      renewBeforePercentage: 30,
      usages: ['digital signature', 'server auth', 'client auth'],
      revisionHistoryLimit: 3,
      privateKey: { algorithm: 'ECDSA', size: 384, encoding: 'PKCS8', rotationPolicy: 'Never' },
      secretTemplate: { labels: { team: 'web' }, annotations: { owner: 'ops' } },
    });
  });

  it('leaves the spec as built when no annotation applies (no empty subject or private key)', () => {
    assert.deepEqual(applied({ 'cert-manager.io/issuer': 'ca' }), base());
    assert.deepEqual(applied({ 'cert-manager.io/secret-template': '{"labels":{}}' }), base());
  });

  it('refuses what cert-manager refuses, with its messages', () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'cert-manager.io/common-name': 'x'.repeat(65) }, 'common name may not be more than 64 bytes'],
      [{ 'cert-manager.io/duration': 'ninety days' }, 'time: invalid duration "ninety days"'],
      [{ 'cert-manager.io/duration': '30m' }, 'duration must be greater than or equal to 1h0m0s'],
      [{ 'cert-manager.io/renew-before': '1m' }, 'renewBefore must be greater than or equal to 5m0s'],
      [
        { 'cert-manager.io/renew-before-percentage': 'half' },
        'strconv.ParseInt: parsing "half": invalid syntax',
      ],
      [{ 'cert-manager.io/usages': 'server auth,bogus' }, 'invalid key usage name "bogus"'],
      [
        { 'cert-manager.io/revision-history-limit': '0' },
        'revision history limit must be a positive number "0"',
      ],
      [
        { 'cert-manager.io/revision-history-limit': '99999999999' },
        'strconv.ParseInt: parsing "99999999999": value out of range',
      ],
      [{ 'cert-manager.io/private-key-algorithm': 'DSA' }, 'invalid private key algorithm "DSA"'],
      [{ 'cert-manager.io/private-key-encoding': 'PEM' }, 'invalid private key encoding "PEM"'],
      [{ 'cert-manager.io/private-key-size': '1024' }, 'invalid private key size for RSA algorithm "1024"'],
      [
        { 'cert-manager.io/private-key-algorithm': 'ECDSA', 'cert-manager.io/private-key-size': '2048' },
        'invalid private key size for ECDSA algorithm "2048"',
      ],
      [{ 'cert-manager.io/private-key-size': 'big' }, 'strconv.Atoi: parsing "big": invalid syntax'],
      [
        { 'cert-manager.io/private-key-rotation-policy': 'Sometimes' },
        'invalid private key rotation policy "Sometimes"',
      ],
      [{ 'cert-manager.io/ip-sans': '10.0.0.1,10.0.0.300' }, '"10.0.0.300" is not a valid IP address'],
      [{ 'cert-manager.io/email-sans': 'not-an-address' }, '"not-an-address" is not a valid email address'],
      [
        { 'cert-manager.io/email-sans': 'Ops <ops@example.com>' },
        '"Ops <ops@example.com>" must only contain the email address itself',
      ],
      [
        { 'cert-manager.io/secret-template': '{"labels":{"a":"b"},"data":{}}' },
        'error parsing secret template JSON: json: unknown field "data"',
      ],
      [
        { 'cert-manager.io/secret-template': '{"annotations":{"cert-manager.io/x":"y"}}' },
        'secretTemplate must not have cert-manager.io/ annotations: "cert-manager.io/x"',
      ],
    ];
    for (const [annotations, detail] of cases) {
      const [key] = Object.keys(annotations).slice(-1);
      assert.equal(failure(annotations), `invalid ingress annotation ${JSON.stringify(key)}: ${detail}`);
    }
    // A 64-byte common name is fine; ed25519 takes any size, unchecked, as upstream.
    assert.equal(applied({ 'cert-manager.io/common-name': 'x'.repeat(64) }).commonName, 'x'.repeat(64));
    assert.equal(
      applied({ 'cert-manager.io/private-key-algorithm': 'Ed25519', 'cert-manager.io/private-key-size': '7' })
        .privateKey?.size,
      7,
    );
  });

  it('splits CSV as Go’s encoding/csv: quoted commas kept, several lines refused', () => {
    assert.deepEqual(splitWithEscapeCSV('a,"b, c",d'), ['a', 'b, c', 'd']);
    assert.deepEqual(splitWithEscapeCSV('"say ""hi"""'), ['say "hi"']);
    assert.throws(() => splitWithEscapeCSV(''), { message: 'no values found after parsing ""' });
    assert.throws(() => splitWithEscapeCSV('a\nb'), {
      message: 'refusing to use "a\\nb" as input as it parses as multiple lines of CSV',
    });
    assert.throws(() => splitWithEscapeCSV('a"b'), /^Error: failed to parse "a\\"b" as CSV: /);
    assert.match(failure({ 'cert-manager.io/subject-countries': '' }), /no values found after parsing ""/);
  });
});

describe('annotations the Certificate carries', () => {
  it('copies the --extra-certificate-annotations the object has, none when it has none', () => {
    const ann = { 'example.com/team': 'web', 'other/key': 'x' };
    assert.deepEqual(extraAnnotations(ann, ['example.com/team', 'example.com/absent']), {
      'example.com/team': 'web',
    });
    assert.equal(extraAnnotations(ann, ['example.com/absent']), undefined);
  });

  it('maps edit-in-place and the ingress class overrides; Gateways name themselves as the parent', () => {
    assert.deepEqual(
      issuerSpecificAnnotations(
        {
          'acme.cert-manager.io/http01-edit-in-place': 'true',
          'acme.cert-manager.io/http01-ingress-class': 'nginx',
          'acme.cert-manager.io/http01-ingress-ingressclassname': 'public',
        },
        { kind: 'Ingress', name: 'web' },
      ),
      {
        'acme.cert-manager.io/http01-override-ingress-name': 'web',
        'cert-manager.io/issue-temporary-certificate': 'true',
        'acme.cert-manager.io/http01-override-ingress-class': 'nginx',
        'acme.cert-manager.io/http01-override-ingress-ingressclassname': 'public',
      },
    );
    // Only the exact "true" turns edit-in-place on (cert-manager compares the string).
    assert.deepEqual(
      issuerSpecificAnnotations(
        { 'acme.cert-manager.io/http01-edit-in-place': 'True' },
        { kind: 'Ingress', name: 'w' },
      ),
      {},
    );
    assert.deepEqual(issuerSpecificAnnotations({}, { kind: 'Gateway', name: 'gw' }), {
      'acme.cert-manager.io/http01-parentrefkind': 'Gateway',
      'acme.cert-manager.io/http01-parentrefname': 'gw',
    });
  });
});
