/**
 * Test support: fast-check generators of whole HTTP requests to the API server as `certkit up` serves it,
 * for the property-based fuzz test. Requests are built from their parts, each drawn from what a client
 * might send by mistake or by malice: raw paths (malformed escapes, dot segments, empty segments, raw UTF-8
 * and invalid UTF-8, very long segments, unknown groups, versions, resources and subresources, every
 * non-resource path), raw query strings (repeated keys, bad escapes, every parameter kube-apiserver reads with
 * meaningful and junk values), headers (Accept, Content-Type, Content-Encoding, Transfer-Encoding,
 * impersonation, odd credentials) and bodies (objects mutated, duplicate keys, deep nesting, huge strings,
 * invalid UTF-8, YAML).
 *
 * Paths and queries are "byte strings": each character is one byte on the wire (Node writes the request line
 * in latin1), which is how raw UTF-8 and invalid UTF-8 reach the server.
 */

import fc from 'fast-check';
import { stringify as yamlStringify } from 'yaml';
import type { RawRequest } from '../apiserver/cert-manager-server.ts';
import { COLLECTIONS } from '../apiserver/cert-manager-server.ts';
import { base64, ECDSA_CSR } from './pem.ts';

/** A custom resource definition the fuzzer may update, patch and delete (not one the fixtures need). */
const FUZZ_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.fuzz.certkit.dev' },
  spec: {
    group: 'fuzz.certkit.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0 } } },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

/** An existing object in each collection (named `fuzz`, but the CRD), so that named verbs reach real objects. */
export const BASE_OBJECTS: Record<string, { path: string; object: Record<string, unknown> }> = {
  configMap: {
    path: COLLECTIONS.configMaps,
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fuzz' }, data: { a: 'b' } },
  },
  secret: {
    path: COLLECTIONS.secrets,
    object: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'fuzz' },
      type: 'Opaque',
      data: { a: 'Yg==' },
    },
  },
  namespace: {
    path: COLLECTIONS.namespaces,
    object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fuzz' } },
  },
  event: {
    path: COLLECTIONS.events,
    object: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'fuzz' },
      involvedObject: { kind: 'ConfigMap', namespace: 'default', name: 'fuzz', apiVersion: 'v1' },
      reason: 'Fuzzed',
      message: 'a fuzzed event',
      type: 'Normal',
      count: 1,
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:00Z',
      source: { component: 'fuzz' },
    },
  },
  lease: {
    path: COLLECTIONS.leases,
    object: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'fuzz' },
      spec: { holderIdentity: 'fuzz', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z' },
    },
  },
  crd: { path: COLLECTIONS.crds, object: FUZZ_CRD },
  certificate: {
    path: COLLECTIONS.certificates,
    object: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'fuzz' },
      spec: {
        secretName: 'fuzz-tls',
        issuerRef: { name: 'ca' },
        dnsNames: ['a.example.com'],
        usages: ['digital signature'],
        privateKey: { algorithm: 'ECDSA', size: 256 },
        renewBeforePercentage: 50,
      },
    },
  },
  certificateRequest: {
    path: COLLECTIONS.certificateRequests,
    object: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'CertificateRequest',
      metadata: { name: 'fuzz' },
      spec: { request: base64(ECDSA_CSR), issuerRef: { name: 'ca' }, usages: ['server auth'] },
    },
  },
  issuer: {
    path: COLLECTIONS.issuers,
    object: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'fuzz' },
      spec: { ca: { secretName: 'ca' } },
    },
  },
  clusterIssuer: {
    path: COLLECTIONS.clusterIssuers,
    object: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'fuzz' },
      spec: { selfSigned: {} },
    },
  },
  acmeIssuer: {
    path: COLLECTIONS.issuers,
    object: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'fuzz-acme' },
      spec: {
        acme: {
          server: 'https://acme.example.com/directory',
          privateKeySecretRef: { name: 'acme-key' },
          solvers: [
            { selector: { dnsZones: ['example.com'] }, dns01: { rfc2136: { nameserver: '10.0.0.53' } } },
            { http01: { ingress: { ingressClassName: 'nginx' } } },
          ],
        },
      },
    },
  },
  order: {
    path: COLLECTIONS.orders,
    object: {
      apiVersion: 'acme.cert-manager.io/v1',
      kind: 'Order',
      metadata: { name: 'fuzz' },
      spec: { request: base64(ECDSA_CSR), issuerRef: { name: 'fuzz-acme' }, dnsNames: ['a.example.com'] },
    },
  },
  challenge: {
    path: COLLECTIONS.challenges,
    object: {
      apiVersion: 'acme.cert-manager.io/v1',
      kind: 'Challenge',
      metadata: { name: 'fuzz' },
      spec: {
        url: 'https://acme.example.com/chall/1',
        authorizationURL: 'https://acme.example.com/authz/1',
        dnsName: 'a.example.com',
        type: 'HTTP-01',
        token: 'tok',
        key: 'tok.thumb',
        solver: { http01: { ingress: { ingressClassName: 'nginx' } } },
        issuerRef: { name: 'fuzz-acme' },
      },
    },
  },
  blob: {
    path: COLLECTIONS.blobs,
    object: {
      apiVersion: 'fuzz.certkit.dev/v1',
      kind: 'Blob',
      metadata: { name: 'fuzz' },
      spec: { a: [1, { b: 'c' }] },
    },
  },
};

/** The name of a base object (the CRD's is fixed by its group and plural). */
export const baseName = (resource: string) =>
  (BASE_OBJECTS[resource].object.metadata as { name: string }).name;

// ---------------------------------------------------------------------------------------------------------
// Bytes on the wire

/** A string as its UTF-8 bytes, one latin1 character per byte. */
const utf8Bytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

/**
 * Text made safe for a request line: bytes Node's client refuses there (controls and space) and `#` (which
 * would start a fragment the server never sees) are percent-encoded; everything else is sent raw.
 */
const wireSafe = (bytes: string) =>
  bytes.replace(
    /[\x00-\x20#\x7f]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );

/** Pieces of a path segment or query value that decoders trip on. */
const trickyPieceArb = fc.constantFrom(
  '%',
  '%z',
  '%zz',
  '%2',
  '%00',
  '%2F',
  '%2f',
  '%25',
  '%C0%AF',
  '%E0%A4',
  '%FF',
  '%ED%A0%80',
  '\xff',
  '\xc3',
  '\xe2\x82',
  '..',
  '.',
  '%2E%2E',
  '+',
  '&',
  '=',
  ';',
  '?',
  '\\',
  '"',
  "'",
  '<',
  '{',
  '~',
);

/**
 * A segment as bytes: a valid name, tricky pieces, raw UTF-8 text, or a very long run.
 *
 * Raw bytes above 0x7F in a request line are refused by Node's HTTP parser with 400 (answered as Go's server
 * answers a malformed request, http/client-errors.ts), where Go reads them into the path and kube-apiserver
 * then answers for that name (typically 404). Both are 4xx: a known difference, which this test accepts.
 */
const segmentBytesArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,20}[a-z0-9])?$/) },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.oneof(trickyPieceArb, fc.string({ maxLength: 4 })), { maxLength: 4 })
      .map((p) => wireSafe(p.join(''))),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => wireSafe(utf8Bytes(s))) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map((s) => wireSafe(utf8Bytes(s))) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(encodeURIComponent) },
  // Longer than any name may be (253), and past Node's 16 KiB header limit (a 431 from Node itself).
  { weight: 1, arbitrary: fc.constantFrom(254, 4_000, 20_000).map((n) => 'a'.repeat(n)) },
);

// ---------------------------------------------------------------------------------------------------------
// Paths

/** Paths the server serves outside the resource API, and near misses of them. */
const NON_RESOURCE_PATHS = [
  '/',
  '/healthz',
  '/healthz/ping',
  '/healthz/etcd',
  '/healthz/bogus',
  '/livez',
  '/livez/ping',
  '/livez/log',
  '/readyz',
  '/readyz/ping',
  '/readyz/poststarthook/crd-informer-synced',
  '/readyz/storage-readiness',
  '/readyz/',
  '/readyz/bogus/deeper',
  '/healthz?verbose',
  '/readyz?verbose=1&exclude=etcd',
  '/version',
  '/version/',
  '/metrics',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/',
  '/openapi/v3/api/v1',
  '/openapi/v3/apis/cert-manager.io/v1',
  '/openapi/v3/apis/coordination.k8s.io/v1',
  '/openapi/v3/apis/apiextensions.k8s.io/v1',
  '/openapi/v3/apis/fuzz.certkit.dev/v1',
  '/openapi/v3/apis/bogus/v1',
  '/openapi/v3/api/v1?hash=0123',
  '/api',
  '/api/',
  '/api/v1',
  '/api/v2',
  '/apis',
  '/apis/',
  '/apis/cert-manager.io',
  '/apis/cert-manager.io/v1',
  '/apis/cert-manager.io/v2',
  '/apis/coordination.k8s.io/v1',
  '/apis/apiextensions.k8s.io/v1',
  '/apis/bogus.example.com/v1',
  '/apis/bogus.example.com/v1/things',
  '/apis/cert-manager.io/v1/bogus',
  '/api/v1/bogus',
  '/api/v1/namespaces/default/bogus/x',
  '/api/v1/watch/namespaces/default/configmaps',
  '/api/v1/watch/configmaps',
  '/api/v1/configmaps',
  '/api/v1/namespaces/default/pods',
  '/apis/cert-manager.io/v1/certificates',
  '/apis/cert-manager.io/v1/namespaces/default/certificates/fuzz/scale',
  '/api/v1/namespaces/fuzz/status',
  '/api/v1/namespaces/fuzz/finalize',
  '/api/v1/namespaces/default/configmaps/fuzz/status',
  '/api/v1/namespaces/default/configmaps/fuzz/a/b/c',
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.fuzz.certkit.dev/status',
  '/apis/fuzz.certkit.dev/v1/namespaces/default/widgets',
  '/logs',
  '/.well-known/openid-configuration',
  '/openid/v1/jwks',
  '/debug/pprof',
];

/** Edits of a well-formed path, each a way a raw path may be malformed. */
type PathEdit =
  | { kind: 'insert'; at: number; segment: string }
  | { kind: 'replace'; at: number; segment: string }
  | { kind: 'dots'; at: number; dots: string }
  | { kind: 'slashes'; at: number }
  | { kind: 'trailing'; suffix: string };

const pathEditArb: fc.Arbitrary<PathEdit> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(8), segment: segmentBytesArb }),
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(8), segment: segmentBytesArb }),
  fc.record({
    kind: fc.constant('dots' as const),
    at: fc.nat(8),
    dots: fc.constantFrom('..', '.', '%2e%2e', '...'),
  }),
  fc.record({ kind: fc.constant('slashes' as const), at: fc.nat(8) }),
  fc.record({
    kind: fc.constant('trailing' as const),
    suffix: fc.constantFrom('/', '//', '/.', '/..', '%2F', ';x', '%'),
  }),
);

function editPath(path: string, edit: PathEdit): string {
  const segments = path.split('/').slice(1);
  const at = (n: number) => n % (segments.length + 1);
  switch (edit.kind) {
    case 'insert':
      segments.splice(at(edit.at), 0, edit.segment);
      break;
    case 'replace':
      segments.splice(at(edit.at), 1, edit.segment);
      break;
    case 'dots':
      segments.splice(at(edit.at), 0, edit.dots);
      break;
    case 'slashes':
      segments.splice(at(edit.at), 0, '');
      break;
    case 'trailing':
      return `/${segments.join('/')}${edit.suffix}`;
  }
  return `/${segments.join('/')}`;
}

// ---------------------------------------------------------------------------------------------------------
// Query strings

/** Every query parameter kube-apiserver reads for a resource request (includeObject comes by Accept). */
const QUERY_NAMES = [
  'watch',
  'resourceVersion',
  'resourceVersionMatch',
  'limit',
  'continue',
  'labelSelector',
  'fieldSelector',
  'timeoutSeconds',
  'fieldValidation',
  'fieldManager',
  'dryRun',
  'force',
  'propagationPolicy',
  'orphanDependents',
  'gracePeriodSeconds',
  'sendInitialEvents',
  'allowWatchBookmarks',
  'includeObject',
  'pretty',
  'exact',
  'export',
];

/** Values each parameter might take: the meaningful ones of every parameter, and junk. */
const queryValueArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      '0',
      '1',
      '-1',
      't',
      'T',
      'TRUE',
      'True',
      'true',
      'f',
      'False',
      'false',
      'yes',
      'All',
      'Strict',
      'Warn',
      'Ignore',
      'strict',
      'Exact',
      'NotOlderThan',
      'Orphan',
      'Background',
      'Foreground',
      'Object',
      'Metadata',
      'None',
      'a=b',
      'a!=b',
      'a in (b,c)',
      'a notin (b)',
      '!a',
      'a,b=c',
      'a=',
      '=b',
      'a in (',
      'metadata.name=fuzz',
      'metadata.namespace!=default',
      'status.phase=Active',
      'spec.issuerRef.name=ca',
      'involvedObject.name=fuzz',
      'type=Opaque',
      'bogus=1',
      'kubectl',
      'a'.repeat(200),
      '9223372036854775807',
      '9223372036854775808',
      '-9223372036854775808',
      '1e3',
      '0x10',
      ' 1',
      'NaN',
      'eyJydiI6MSwic3RhcnQiOiJhIn0',
      'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJmdXp6XHUwMDAwIn0',
      'not-base64!',
    ),
  },
  // resourceVersions the server has reached, and a few it has not (a read at a future one waits 3 s).
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 60 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('99999999999', '18446744073709551616') },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.array(trickyPieceArb, { maxLength: 3 }).map((p) => wireSafe(p.join(''))) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => wireSafe(utf8Bytes(s))) },
);

const queryNameArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...QUERY_NAMES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: trickyPieceArb.map(wireSafe) },
);

/**
 * A raw query string, repeated keys included (`?a=1&a=2`), and now and then a key without a value, empty
 * pairs or a bare `?`. Watches get a bounded timeoutSeconds (see `boundWatch`).
 */
/** Combinations of parameters that reach code single random pairs rarely reach together. */
const QUERY_PRESETS = [
  'resourceVersionMatch=Exact&resourceVersion=99999999999',
  'resourceVersionMatch=Exact&resourceVersion=1',
  'resourceVersionMatch=Exact&resourceVersion=5&limit=1',
  'resourceVersionMatch=NotOlderThan&resourceVersion=0',
  'resourceVersionMatch=NotOlderThan&resourceVersion=3&limit=2',
  'resourceVersion=0&limit=1',
  'resourceVersion=2&limit=1',
  'limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0',
  'limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiLi4vLi4vIn0',
  'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
  'watch=true&sendInitialEvents=true',
  'watch=true&resourceVersion=1',
  'watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dfuzz',
  'fieldSelector=metadata.name%3Dfuzz&resourceVersionMatch=Exact&resourceVersion=3',
  'dryRun=All&fieldManager=fuzz&fieldValidation=Strict',
  'dryRun=All&force=true&fieldManager=fuzz',
  'force=true',
  'propagationPolicy=Foreground&gracePeriodSeconds=0',
  'orphanDependents=true&propagationPolicy=Orphan',
  'orphanDependents=false',
];

const queryArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom(...QUERY_PRESETS) },
  {
    weight: 6,
    arbitrary: fc
      .array(
        fc.oneof(
          { weight: 8, arbitrary: fc.tuple(queryNameArb, queryValueArb).map(([n, v]) => `${n}=${v}`) },
          { weight: 1, arbitrary: queryNameArb },
          { weight: 1, arbitrary: fc.constantFrom('', '=', '&', '==') },
        ),
        { minLength: 1, maxLength: 6 },
      )
      .map((pairs) => pairs.join('&')),
  },
);

// ---------------------------------------------------------------------------------------------------------
// Headers

const acceptArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      '*/*',
      'application/*',
      'application/json, */*',
      'application/json;q=0.9, application/yaml;q=1',
      'application/json;as=Table;v=v1;g=meta.k8s.io',
      'application/json;as=Table;v=v1;g=meta.k8s.io;includeObject=None',
      'application/json;as=Table;v=v1;g=meta.k8s.io;includeObject=Object',
      'application/json;as=Table;v=v1;g=meta.k8s.io;includeObject=Metadata',
      'application/json;as=Table;v=v1;g=meta.k8s.io;includeObject=Bogus',
      'application/json;as=Table;v=v1beta1;g=meta.k8s.io',
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
      'application/json;as=Table;g=meta.k8s.io',
      'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
      'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      'application/json;as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io',
      'application/vnd.kubernetes.protobuf',
      'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io',
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      'application/vnd.kubernetes.protobuf;stream=watch',
      'application/json;stream=watch',
      'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
      'application/yaml',
      'text/html',
      'text/plain',
      'application/json;as=Bogus',
      'application/json;charset=utf-16',
      'application/json;q=0',
      'application/json;;;==;',
      ';',
      ',,,',
      'application/json; as="Table"; v=v1; g=meta.k8s.io',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map(headerSafe) },
);

const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset=latin1',
      'application/json; charset="utf-8"',
      'application/json; foo=bar',
      'Application/JSON',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/json-patch+json',
      'application/apply-patch+yaml',
      'application/apply-patch+yaml; charset=utf-8',
      'application/apply-patch+cbor',
      'application/yaml',
      'application/vnd.kubernetes.protobuf',
      'application/cbor',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      '',
      undefined,
      ';',
      'application/',
      '/json',
      'application/json;',
      'application/json; charset',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map(headerSafe) },
);

/** Characters Node's client accepts in a header value (its own check refuses controls). */
function headerSafe(s: string): string {
  return utf8Bytes(s).replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '');
}

/** Credentials: mostly the test's own token (added by rawRequest), sometimes none or a wrong one. */
type Credentials = { kind: 'token' } | { kind: 'anonymous'; header?: string };

const credentialsArb = (token: string): fc.Arbitrary<Credentials> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant({ kind: 'token' } as const) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          undefined,
          '',
          'Bearer',
          'Bearer ',
          'Bearer  ',
          'Bearer wrong',
          `bearer ${token}`,
          `Bearer  ${token}`,
          `Bearer ${token} `,
          `Bearer ${token}x`,
          `Bearer ${token.slice(0, -1)}`,
          `Basic ${Buffer.from(`admin:${token}`).toString('base64')}`,
          'Basic !!!',
          `Bearer ${'a'.repeat(10_000)}`,
          'Negotiate abc',
          'Bearer \xff\xfe',
          // JWT-shaped: what the ServiceAccount token authenticator looks at (the issuer is certkit up's).
          'Bearer a.b.c',
          'Bearer ..',
          `Bearer e30.${Buffer.from('{"iss":"https://kubernetes.default.svc.cluster.local"}').toString('base64url')}.AAAA`,
          `Bearer eyJhbGciOiJub25lIn0.${Buffer.from('{"iss":"https://kubernetes.default.svc.cluster.local","exp":1e300}').toString('base64url')}.`,
        )
        .map((header) => ({ kind: 'anonymous' as const, header })),
    },
  );

/** Headers beside Accept and Content-Type: impersonation, encodings and others kube-apiserver reads. */
const extraHeadersArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  {
    weight: 4,
    arbitrary: fc
      .subarray(
        [
          ['Impersonate-User', fc.constantFrom('system:anonymous', 'alice', '', '\xff')],
          ['Impersonate-Group', fc.constantFrom('system:masters', 'system:authenticated', '')],
          ['Impersonate-Uid', fc.constantFrom('1234', '')],
          ['Impersonate-Extra-Scopes', fc.constantFrom('view', '%zz', '')],
          [
            'Content-Encoding',
            fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'zstd', 'bogus', 'gzip, gzip'),
          ],
          ['Accept-Encoding', fc.constantFrom('gzip', 'br', '*', 'identity;q=0', 'bogus')],
          ['Transfer-Encoding', fc.constantFrom('chunked', 'gzip, chunked')],
          ['Expect', fc.constantFrom('100-continue')],
          ['User-Agent', fc.constantFrom('', 'kubectl/v1.32.0', 'a'.repeat(2_000))],
          ['X-Remote-User', fc.constantFrom('system:admin')],
          ['Audit-ID', fc.constantFrom('', 'x'.repeat(300))],
          ['If-None-Match', fc.constantFrom('*', '"abc"', 'W/"0"')],
          ['X-Forwarded-For', fc.constantFrom('1.2.3.4', 'garbage')],
          ['Connection', fc.constantFrom('keep-alive', 'upgrade')],
          ['Upgrade', fc.constantFrom('websocket', 'SPDY/3.1', 'h2c')],
        ] as const,
        { minLength: 1, maxLength: 3 },
      )
      .chain((pairs) =>
        fc.tuple(
          ...pairs.map(([name, value]) => (value as fc.Arbitrary<string>).map((v) => [name, v] as const)),
        ),
      )
      .map((pairs) => Object.fromEntries(pairs)),
  },
);

// ---------------------------------------------------------------------------------------------------------
// Bodies

/** Any JSON value, a few levels deep. */
const jsonArb = fc.jsonValue({ maxDepth: 3 });

/** Paths in an object to replace, as member names: ObjectMeta's, the specs', the rest. */
const METADATA_PATHS: readonly string[][] = [
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'generateName'],
  ['metadata', 'namespace'],
  ['metadata', 'labels'],
  ['metadata', 'labels', 'a'],
  ['metadata', 'annotations'],
  ['metadata', 'annotations', 'a'],
  ['metadata', 'ownerReferences'],
  ['metadata', 'ownerReferences', '0'],
  ['metadata', 'finalizers'],
  ['metadata', 'managedFields'],
  ['metadata', 'managedFields', '0'],
  ['metadata', 'resourceVersion'],
  ['metadata', 'uid'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'deletionGracePeriodSeconds'],
  ['metadata', 'generation'],
  ['metadata', 'selfLink'],
  ['metadata', 'bogus'],
];
const SPEC_PATHS: readonly string[][] = [
  ['spec'],
  ['spec', 'usages'],
  ['spec', 'ipAddresses'],
  ['spec', 'uris'],
  ['spec', 'otherNames'],
  ['spec', 'emailAddresses'],
  ['spec', 'dnsNames'],
  ['spec', 'commonName'],
  ['spec', 'additionalOutputFormats'],
  ['spec', 'renewBeforePercentage'],
  ['spec', 'renewBefore'],
  ['spec', 'duration'],
  ['spec', 'privateKey'],
  ['spec', 'privateKey', 'size'],
  ['spec', 'privateKey', 'algorithm'],
  ['spec', 'issuerRef'],
  ['spec', 'secretTemplate'],
  ['spec', 'keystores'],
  ['spec', 'nameConstraints'],
  ['spec', 'subject'],
  ['spec', 'request'],
  ['spec', 'ca'],
  ['spec', 'acme'],
  ['spec', 'selfSigned'],
  ['spec', 'vault'],
  ['spec', 'holderIdentity'],
  ['spec', 'leaseDurationSeconds'],
  ['spec', 'renewTime'],
  ['spec', 'finalizers'],
  ['spec', 'group'],
  ['spec', 'names'],
  ['spec', 'names', 'plural'],
  ['spec', 'versions'],
  ['spec', 'versions', '0', 'schema'],
  ['spec', 'versions', '0', 'schema', 'openAPIV3Schema'],
  ['spec', 'scope'],
];
const OTHER_PATHS: readonly string[][] = [
  ['apiVersion'],
  ['kind'],
  ['data'],
  ['data', 'a'],
  ['binaryData'],
  ['stringData'],
  ['immutable'],
  ['type'],
  ['status'],
  ['status', 'phase'],
  ['status', 'conditions'],
  ['status', 'conditions', '0'],
  ['status', 'certificate'],
  ['involvedObject'],
  ['count'],
  ['firstTimestamp'],
  ['eventTime'],
  ['series'],
];

const mutationPathArb: fc.Arbitrary<readonly string[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...METADATA_PATHS) },
  { weight: 3, arbitrary: fc.constantFrom(...SPEC_PATHS) },
  { weight: 2, arbitrary: fc.constantFrom(...OTHER_PATHS) },
  {
    weight: 1,
    arbitrary: fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }) as fc.Arbitrary<
      readonly string[]
    >,
  },
);

/** Values to put there: any JSON, and values of the types the fields have but out of range. */
const fieldValueArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: jsonArb },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      null,
      '',
      -1,
      0,
      1.5,
      2 ** 53,
      -(2 ** 63),
      1e308,
      'a'.repeat(300),
      'Invalid Name!',
      '2026-13-45T99:99:99Z',
      'fuzz',
      ['fuzz'],
      [null],
      [{}],
      { '': '' },
      { 'a/b/c': 'd' },
      JSON.parse('{"__proto__":"x"}'),
      { 'kubernetes.io/metadata.name': 'other' },
      [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u', controller: true }],
      [{ type: 'Ready', status: 'True' }],
      [{ type: 'Approved', status: 'False', reason: 'x' }],
      [{ manager: 'x', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:a': 5 } }],
      [{ manager: 'x', operation: 'Bogus', fieldsV1: 'x' }],
    ),
  },
);

function withMutation(object: Record<string, unknown>, path: readonly string[], value: unknown): unknown {
  const copy = structuredClone(object);
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  // defineProperty, so that a member named __proto__ is data, as JSON.parse makes it on the server.
  Object.defineProperty(node, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** Nested arrays and objects as text, around kube's nesting limit (10,000) and the YAML parser's. */
const nestingArb = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 1, max: 100 }),
      fc.integer({ min: 490, max: 510 }),
      fc.integer({ min: 1_990, max: 2_010 }),
      fc.integer({ min: 9_990, max: 10_010 }),
      fc.integer({ min: 10_000, max: 100_000 }),
    ),
    fc.constantFrom('arrays', 'objects', 'yaml-sequences', 'yaml-maps'),
  )
  .map(([depth, shape]) => {
    switch (shape) {
      case 'arrays':
        return `${'['.repeat(depth)}${']'.repeat(depth)}`;
      case 'objects':
        return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      // Block-style YAML nests without brackets: "- - - x" is three sequences deep.
      case 'yaml-sequences':
        return `\n${'- '.repeat(depth)}x`;
      case 'yaml-maps':
        return `\n${Array.from({ length: Math.min(depth, 2_000) }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1`;
    }
  });

/**
 * JSON text of an object with one member written twice: a top-level member (`kind`, `metadata`, ...) or a
 * member of metadata. The generated value comes first, so the object's own value is the last, which wins.
 */
function withDuplicateKey(object: unknown, where: string, value: unknown): string {
  const text = JSON.stringify(object);
  const [parent, member] = where.includes('.') ? where.split('.') : [undefined, where];
  const at = parent === undefined ? 1 : text.indexOf(`"${parent}":{`) + parent.length + 4;
  return `${text.slice(0, at)}"${member}":${JSON.stringify(value)},${text.slice(at)}`;
}

/**
 * The base object under another name, so that creates make new objects rather than collide with the base
 * one (a CRD's name is its plural and group: both change together).
 */
function named(object: Record<string, unknown>, name: string): Record<string, unknown> {
  const copy = structuredClone(object) as Record<string, any>;
  if (copy.metadata.name === name) return copy;
  if (copy.kind === 'CustomResourceDefinition') {
    const plural = name.replace(/[^a-z0-9]/g, '') || 'widgets';
    copy.metadata.name = `${plural}.${copy.spec.group}`;
    copy.spec.names = { plural, singular: `${plural}x`, kind: `K${plural}`, listKind: `K${plural}List` };
  } else {
    copy.metadata.name = name;
  }
  return copy;
}

/** A protobuf field: tag, length, bytes (lengths below 128 take one byte; longer ones are varints). */
function protoField(field: number, bytes: Buffer): Buffer {
  const length: number[] = [];
  let n = bytes.length;
  do {
    length.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...length]), bytes]);
}

function protobufBodyArb(base: Record<string, unknown>): fc.Arbitrary<Buffer> {
  const magic = Buffer.from('k8s\0', 'latin1');
  const typeMeta = protoField(
    1,
    Buffer.concat([
      protoField(1, Buffer.from(String(base.apiVersion))),
      protoField(2, Buffer.from(String(base.kind))),
    ]),
  );
  return fc.oneof(
    fc
      .uint8Array({ maxLength: 80 })
      .map((raw) => Buffer.concat([magic, typeMeta, protoField(2, Buffer.from(raw))])),
    fc.uint8Array({ maxLength: 80 }).map((raw) => Buffer.concat([magic, Buffer.from(raw)])),
    // The object's metadata (ObjectMeta is field 1 of every kind; name is its field 1), then random bytes.
    fc
      .uint8Array({ maxLength: 40 })
      .map((raw) =>
        Buffer.concat([
          magic,
          typeMeta,
          protoField(2, Buffer.concat([protoField(1, protoField(1, Buffer.from('pb'))), Buffer.from(raw)])),
        ]),
      ),
  );
}

/** A body as bytes to send, or none. */
export type Body = string | Buffer | undefined;

/** The body types kube reads: mostly JSON objects, YAML where apply takes it, and junk. */
function bodyArb(resource: string, name: string): fc.Arbitrary<Body> {
  const base = named(BASE_OBJECTS[resource].object, name);
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(mutationPathArb, fieldValueArb)
        .map(([p, v]) => JSON.stringify(withMutation(base, p, v))),
    },
    { weight: 2, arbitrary: fc.constant(JSON.stringify(base)) },
    // Patch documents: JSON patch operations, merge patches of the base object's parts.
    {
      weight: 3,
      arbitrary: fc
        .array(
          fc.record(
            {
              op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'),
              path: fc.oneof(
                mutationPathArb.map((p) => `/${p.join('/')}`),
                fc.constantFrom(
                  '',
                  '/',
                  '/-',
                  '/metadata/labels/a~1b',
                  '/data/~2',
                  '/spec/dnsNames/-',
                  '/spec/dnsNames/99',
                ),
                fc.string({ maxLength: 10 }),
              ),
              from: fc.oneof(
                mutationPathArb.map((p) => `/${p.join('/')}`),
                fc.string({ maxLength: 10 }),
              ),
              value: fieldValueArb,
            },
            { requiredKeys: ['op', 'path'] },
          ),
          { maxLength: 3 },
        )
        .map((ops) => JSON.stringify(ops)),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(mutationPathArb, fieldValueArb)
        .map(([p, v]) => JSON.stringify(withMutation({}, p, v))),
    },
    // Strategic merge patch directives.
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          { $patch: 'replace' },
          { $patch: 'delete' },
          { $patch: 'bogus' },
          { metadata: { $patch: 'delete' } },
          { metadata: { finalizers: { $patch: 'replace' } } },
          { $retainKeys: ['data'] },
          { $retainKeys: 'x' },
          { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } },
          { '$setElementOrder/data': [{ a: 1 }] },
          { spec: { dnsNames: [{ $patch: 'delete' }] } },
          { status: { conditions: [{ type: 'Ready', $patch: 'delete' }] } },
        )
        .map((p) => JSON.stringify(p)),
    },
    // Duplicate members, which fieldValidation=Strict refuses and others must take without failing.
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'kind',
            'apiVersion',
            'metadata',
            'spec',
            'data',
            'metadata.name',
            'metadata.labels',
          ),
          jsonArb,
        )
        .map(([where, v]) => withDuplicateKey(base, where, v)),
    },
    {
      weight: 2,
      arbitrary: nestingArb.map(
        (n) =>
          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n"},"x":${n.startsWith('\n') ? `[${n.trim()}]` : n}}`,
      ),
    },
    {
      weight: 1,
      arbitrary: nestingArb.map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\ndata:${n}`),
    },
    // Huge strings: just under and over the 3 MiB request limit, and the 1 MiB object limits.
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(1_000_000, 1_100_000, 3 * 1024 * 1024 - 200, 3 * 1024 * 1024 + 10)
        .map((n) => JSON.stringify(withMutation(base, ['data', 'big'], 'x'.repeat(n)))),
    },
    // Invalid UTF-8 inside strings and outside them, and a byte-order mark.
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            Buffer.from([0xff]),
            Buffer.from([0xc3, 0x28]),
            Buffer.from([0xed, 0xa0, 0x80]),
            Buffer.from([0xef, 0xbb, 0xbf]),
            Buffer.from([0]),
          ),
          fc.nat(),
          fc.boolean(),
        )
        .map(([bytes, at, inString]) => {
          const text = JSON.stringify(withMutation(base, ['metadata', 'labels', 'a'], 'zz'));
          if (inString) {
            const i = text.indexOf('zz') + 1;
            return Buffer.concat([Buffer.from(text.slice(0, i)), bytes, Buffer.from(text.slice(i))]);
          }
          const i = at % (text.length + 1);
          return Buffer.concat([Buffer.from(text.slice(0, i)), bytes, Buffer.from(text.slice(i))]);
        }),
    },
    // YAML, as apply takes it: the object, mutated, with anchors and aliases, tags and several documents.
    {
      weight: 3,
      arbitrary: fc
        .tuple(mutationPathArb, fieldValueArb)
        .map(([p, v]) => yamlStringify(withMutation(base, p, v))),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `${yamlStringify(base)}---\n${yamlStringify(base)}`,
        'a: &a [1, 2]\nb: *a\n',
        `a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`).join('\n')}\n`,
        '!!binary aGVsbG8=',
        'metadata: !!map {name: x}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: {a: !!int 5}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: z\n  name: z\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\ndata:\n  ? [a, b]\n  : c\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\ndata: {1: 2, true: false, null: ~}\n',
        '%YAML 1.1\n---\na: yes\n',
        '<<: {a: 1}\n',
        '\t',
        '- a\n- b\n',
        '"unterminated',
        '@',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'null',
        '[]',
        '{}',
        '"x"',
        '1',
        'true',
        '{"a":1}{"b":2}',
        '{"a":1,}',
        '\ufeff{}',
      ),
    },
    { weight: 1, arbitrary: jsonArb.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)) },
    // Kubernetes protobuf: the "k8s\0" envelope (runtime.Unknown: TypeMeta, raw bytes), with random bytes as
    // the object, or random bytes after the magic.
    { weight: 2, arbitrary: protobufBodyArb(base) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

// ---------------------------------------------------------------------------------------------------------
// Whole requests

export type Verb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'other';

/** One generated request, and what it was built from (for messages and for restoring fixtures). */
export interface FuzzCase {
  verb: Verb;
  resource: string;
  request: RawRequest;
  /** How many copies are sent at once: now and then several, for writes that race each other. */
  copies: number;
}

/** The content type a verb's body usually has; any other now and then. */
function contentTypeFor(verb: Verb): fc.Arbitrary<string | undefined> {
  const usual =
    verb === 'patch'
      ? fc.constantFrom(
          'application/merge-patch+json',
          'application/strategic-merge-patch+json',
          'application/json-patch+json',
          'application/apply-patch+yaml',
        )
      : fc.constantFrom('application/json', 'application/json; charset=utf-8');
  return fc.oneof({ weight: 4, arbitrary: usual }, { weight: 1, arbitrary: contentTypeArb });
}

const verbArb = fc.constantFrom<Verb>(
  'get',
  'list',
  'watch',
  'create',
  'create',
  'update',
  'update',
  'patch',
  'patch',
  'patch',
  'delete',
  'deletecollection',
  'other',
);

/** The target of a resource request: the collection, the object, its status or another subresource. */
function resourcePathArb(resource: string, verb: Verb): fc.Arbitrary<string> {
  const collection = BASE_OBJECTS[resource].path;
  const objectPath = (name: string) => `${collection}/${name}`;
  if (verb === 'list' || verb === 'watch' || verb === 'create' || verb === 'deletecollection')
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant(collection) },
      // The legacy watch path, and a collection in another namespace (one that does not exist).
      { weight: 1, arbitrary: fc.constant(collection.replace(/^(\/apis?\/[^/]+(?:\/v1)?)\//, '$1/watch/')) },
      {
        weight: 1,
        arbitrary: fc.constant(collection.replace('/namespaces/default/', '/namespaces/nowhere/')),
      },
    );
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(objectPath(baseName(resource))) },
    { weight: 3, arbitrary: fc.constant(`${objectPath(baseName(resource))}/status`) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('scale', 'bogus', 'status/x', 'finalize', 'approval')
        .map((s) => `${objectPath(baseName(resource))}/${s}`),
    },
    { weight: 2, arbitrary: segmentBytesArb.map(objectPath) },
  );
}

/**
 * Resource requests of every verb, and now and then a non-resource path; either of them with the raw path
 * edited. The test's own token authenticates nearly all of them.
 */
export function fuzzCaseArb(token: string): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom(...Object.keys(BASE_OBJECTS)), verbArb)
    .chain(([resource, verb]) =>
      fc.record({
        resource: fc.constant(resource),
        verb: fc.constant(verb),
        path: fc.oneof(
          { weight: 10, arbitrary: resourcePathArb(resource, verb) },
          { weight: 2, arbitrary: fc.constantFrom(...NON_RESOURCE_PATHS) },
        ),
        edits: fc.oneof(
          { weight: 6, arbitrary: fc.constant<PathEdit[]>([]) },
          { weight: 2, arbitrary: fc.array(pathEditArb, { minLength: 1, maxLength: 2 }) },
        ),
        query: queryArb,
        accept: acceptArb,
        contentType: contentTypeFor(verb),
        extraHeaders: extraHeadersArb,
        credentials: credentialsArb(token),
        // Creates mostly under a new name (a create of the base object's name is a 409).
        body: (verb === 'create'
          ? fc.oneof(
              { weight: 1, arbitrary: fc.constant(baseName(resource)) },
              { weight: 3, arbitrary: fc.nat(100_000).map((n) => `fuzz-${n}`) },
            )
          : fc.constant(baseName(resource))
        ).chain((name) => bodyArb(resource, name)),
        copies: fc.oneof(
          { weight: 9, arbitrary: fc.constant(1) },
          { weight: 1, arbitrary: fc.constantFrom(2, 4) },
        ),
        // Not CONNECT: Node's client turns it into a tunnel to the path.
        method: fc.constantFrom(
          'OPTIONS',
          'HEAD',
          'TRACE',
          'PROPFIND',
          'GET',
          'POST',
          'PUT',
          'PATCH',
          'DELETE',
        ),
      }),
    )
    .map((c) => {
      let path = c.edits.reduce(editPath, c.path.split('?')[0]);
      const fixedQuery = c.path.includes('?') ? c.path.split('?')[1] : '';
      let query = [fixedQuery, c.query].filter(Boolean).join('&');
      if (c.verb === 'watch') query = boundWatch(query);
      else if (/(^|&)watch=/.test(query)) query = boundWatch(query);
      if (path === '') path = '/';
      const headers: Record<string, string> = { ...c.extraHeaders };
      if (c.accept !== undefined) headers.Accept = c.accept;
      if (c.contentType !== undefined) headers['Content-Type'] = c.contentType;
      if (c.credentials.kind === 'anonymous' && c.credentials.header !== undefined)
        headers.Authorization = c.credentials.header;
      const method = verbMethod(c.verb, c.method);
      const withBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && method !== 'TRACE';
      const request: RawRequest = {
        method,
        path: wireSafe(query || c.path.endsWith('?') ? `${path}?${query}` : path),
        headers,
        body: withBody ? c.body : undefined,
        anonymous: c.credentials.kind === 'anonymous',
        // A watch (asked for by the query, or the legacy path) streams until its timeoutSeconds: the client
        // reads its beginning only.
        readForMs: method === 'GET' ? 300 : undefined,
      };
      // Counterexamples are printed as the request, with long paths and bodies cut.
      return {
        verb: c.verb,
        resource: c.resource,
        request,
        copies: c.copies,
        [fc.toStringMethod]: () =>
          `${c.copies > 1 ? `${c.copies} at once: ` : ''}${describeRequest(request)}`,
      };
    });
}

/** A request in a line: method, path, headers and the beginning of the body. */
export function describeRequest(req: RawRequest): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length})` : s);
  const headers = Object.entries(req.headers ?? {})
    .map(([k, v]) => `${k}: ${JSON.stringify(cut(v, 100))}`)
    .join(', ');
  const body =
    req.body === undefined ? 'no body' : `body ${JSON.stringify(cut(req.body.toString('latin1'), 300))}`;
  return `${req.method} ${JSON.stringify(cut(req.path, 300))}${req.anonymous ? ' (anonymous)' : ''} [${headers}] ${body}`;
}

/**
 * Every watch gets a short timeoutSeconds of its own, last so that it wins over a generated one (the server
 * takes the first; a generated one is then ignored for the bound, not for parsing: both stay in the query).
 */
function boundWatch(query: string): string {
  return ['watch=true', 'timeoutSeconds=1', query].filter(Boolean).join('&');
}

function verbMethod(verb: Verb, other: string): string {
  switch (verb) {
    case 'get':
    case 'list':
    case 'watch':
      return 'GET';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return 'PATCH';
    case 'delete':
    case 'deletecollection':
      return 'DELETE';
    case 'other':
      return other;
  }
}
