/**
 * Property-based fuzzing of the API server as `certkit up` serves it (cert-manager CRDs and admission):
 * random paths, query strings, headers, content types and bodies on every verb, built-in and custom
 * resources. Whatever the request, the server answers within a deadline, never with a 5xx, and keeps
 * answering /healthz.
 *
 * The seed is printed; FUZZ_SEED=<seed> replays a run and FUZZ_RUNS=<n> sets how many requests are made
 * (default 300, about 12 s here).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TestServer } from '../../../apiserver/src/testing/test-server.ts';
import {
  COLLECTIONS,
  type RawRequest,
  rawRequest,
  startCertManagerServer,
} from './apiserver-test-support.ts';
import { base64, ECDSA_CSR } from './testdata/pem.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 300;
/** Long enough for the slowest legitimate answer (a read at a future resourceVersion waits 3 s). */
const REQUEST_DEADLINE_MS = 8_000;

/** An existing object in each collection, so that named verbs reach real objects too. */
const BASE_OBJECTS: Record<string, { path: string; object: Record<string, unknown> }> = {
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

// ---------------------------------------------------------------------------------------------------------
// Generators

/** Names: the existing object, other valid names, and arbitrary text (percent-encoded, so that the path
 * itself stays well-formed: malformed percent-encoding is another engineer's part, h1-transport). */
const nameArb = fc.oneof(
  fc.constant('fuzz'),
  fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,20}[a-z0-9])?$/),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
);

const resourceArb = fc.constantFrom(...Object.keys(BASE_OBJECTS));

/** Values a query parameter might take: meaningful ones and junk. */
const queryValueArb = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '1',
    '-1',
    'true',
    'false',
    'All',
    'Strict',
    'Warn',
    'Ignore',
    'Exact',
    'NotOlderThan',
  ),
  fc.constantFrom(
    'Orphan',
    'Background',
    'Foreground',
    'Object',
    'Metadata',
    'None',
    'a=b',
    'a in (b)',
    'metadata.name=fuzz',
  ),
  // Small numbers: resourceVersions the server has reached (a future one waits 3 s, tested on its own).
  fc.integer({ min: -5, max: 20 }).map(String),
  fc.string({ maxLength: 20 }),
);

const queryNames = [
  'labelSelector',
  'fieldSelector',
  'resourceVersion',
  'resourceVersionMatch',
  'limit',
  'continue',
  'timeoutSeconds',
  'allowWatchBookmarks',
  'sendInitialEvents',
  'dryRun',
  'fieldManager',
  'fieldValidation',
  'propagationPolicy',
  'gracePeriodSeconds',
  'includeObject',
  'pretty',
  // Boolean values such as True or 1 are parsed by another engineer's part (h5-query, Go's ParseBool);
  // they give 400s here today, which this test accepts.
  'orphanDependents',
  'force',
];

const queryArb = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...queryNames), fc.string({ maxLength: 10 })), queryValueArb), {
    maxLength: 4,
  })
  .map((pairs) => pairs.filter(([name]) => name !== 'watch' && name !== 'timeoutSeconds'));

/** Any JSON value, a few levels deep. */
const jsonArb = fc.jsonValue({ maxDepth: 3 });

/** A path in an object to replace, as member names. */
/** Paths in an object to replace, as member names: ObjectMeta's, the specs' (cert-manager's), the rest. */
const METADATA_PATHS: readonly string[][] = [
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'generateName'],
  ['metadata', 'namespace'],
  ['metadata', 'labels'],
  ['metadata', 'annotations'],
  ['metadata', 'ownerReferences'],
  ['metadata', 'ownerReferences', '0'],
  ['metadata', 'finalizers'],
  ['metadata', 'managedFields'],
  ['metadata', 'resourceVersion'],
  ['metadata', 'uid'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'deletionGracePeriodSeconds'],
  ['metadata', 'generation'],
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
];
const OTHER_PATHS: readonly string[][] = [
  ['apiVersion'],
  ['kind'],
  ['data'],
  ['stringData'],
  ['type'],
  ['status'],
  ['status', 'conditions'],
];

const mutationPathArb: fc.Arbitrary<readonly string[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...METADATA_PATHS) },
  { weight: 3, arbitrary: fc.constantFrom(...SPEC_PATHS) },
  { weight: 1, arbitrary: fc.constantFrom(...OTHER_PATHS) },
  {
    weight: 1,
    arbitrary: fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }) as fc.Arbitrary<
      readonly string[]
    >,
  },
);

function withMutation(
  object: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(object) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  // defineProperty, so that a member named __proto__ is data, as JSON.parse makes it on the server.
  Object.defineProperty(node, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** Nested arrays and objects as text, around the nesting limit. */
const nestingArb = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 1, max: 100 }),
      fc.integer({ min: 1_990, max: 2_010 }),
      fc.integer({ min: 2_000, max: 12_000 }),
    ),
    fc.boolean(),
  )
  .map(([depth, arrays]) =>
    arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

type BodyKind = { text: string | undefined };

/** Bodies: the base object mutated, patches of every shape, arbitrary JSON and arbitrary bytes. */
function bodyArb(resource: string, contentType: string): fc.Arbitrary<BodyKind> {
  const base = BASE_OBJECTS[resource].object;
  // What the content type calls for most of the time, anything some of the time.
  const jsonPatch = contentType === 'application/json-patch+json';
  return fc.oneof(
    {
      weight: jsonPatch ? 1 : 8,
      arbitrary: fc
        .tuple(mutationPathArb, jsonArb)
        .map(([p, v]) => ({ text: JSON.stringify(withMutation(base, p, v)) })),
    },
    { weight: 1, arbitrary: fc.constant({ text: JSON.stringify(base) }) },
    {
      weight: jsonPatch ? 8 : 1,
      arbitrary: fc
        .array(
          fc.record({
            op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'),
            path: fc.oneof(
              mutationPathArb.map((p) => `/${p.join('/')}`),
              fc.string({ maxLength: 10 }),
            ),
            from: fc.oneof(
              mutationPathArb.map((p) => `/${p.join('/')}`),
              fc.string({ maxLength: 10 }),
            ),
            value: jsonArb,
          }),
          { maxLength: 3 },
        )
        .map((ops) => ({ text: JSON.stringify(ops) })),
    },
    { weight: 1, arbitrary: jsonArb.map((v) => ({ text: JSON.stringify(v) })) },
    {
      weight: 2,
      arbitrary: nestingArb.map((n) => ({
        text: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n"},"x":${n}}`,
      })),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((text) => ({ text })) },
    { weight: 1, arbitrary: fc.constant({ text: undefined }) },
  );
}

const contentTypeArb = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'text/plain',
  '',
);

const acceptArb = fc.constantFrom(
  'application/json',
  '*/*',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/vnd.kubernetes.protobuf',
  'application/yaml',
  'text/html',
  'application/json;as=Bogus',
);

type Verb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'other';

interface Case {
  verb: Verb;
  resource: string;
  name: string;
  query: readonly [string, string][];
  accept: string;
  contentType: string;
  body: BodyKind;
  method: string;
}

/** The content type a verb's body usually has; any other now and then. */
function contentTypeFor(verb: Verb): fc.Arbitrary<string> {
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
  'update',
  'patch',
  'patch',
  'delete',
  'deletecollection',
  'other',
);

const caseArb: fc.Arbitrary<Case> = fc
  .tuple(resourceArb, verbArb)
  .chain(([resource, verb]) => contentTypeFor(verb).map((contentType) => ({ resource, verb, contentType })))
  .chain(({ resource, verb, contentType }) =>
    fc.record({
      verb: fc.constant(verb),
      resource: fc.constant(resource),
      // Mostly the existing object, so that updates, patches and deletes reach one.
      name: fc.oneof(
        { weight: 3, arbitrary: fc.constant('fuzz') },
        // The status subresource, which validates the status alone.
        { weight: 1, arbitrary: fc.constant('fuzz/status') },
        { weight: 1, arbitrary: nameArb },
      ),
      // Mostly a plain request, so that bodies get past the checks of the query and Accept header.
      query: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: queryArb }),
      accept: fc.oneof(
        { weight: 2, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: acceptArb },
      ),
      contentType: fc.constant(contentType),
      body: bodyArb(resource, contentType),
      // Not CONNECT: Node's client turns it into a tunnel to the path.
      method: fc.constantFrom('OPTIONS', 'HEAD', 'TRACE', 'PROPFIND'),
    }),
  );

/** Verbs that would take the test's own fixtures away from every later case: not generated. */
function destroysFixtures(c: Case): boolean {
  // Deleting every namespace (default included) or the namespace collection: nothing could be created after.
  return (
    c.resource === 'namespace' &&
    (c.verb === 'deletecollection' || (c.verb === 'delete' && c.name === 'default'))
  );
}

function toRequest(c: Case): RawRequest {
  const base = BASE_OBJECTS[c.resource].path;
  const query = new URLSearchParams([...c.query]);
  const named = `${base}/${c.name}`;
  const headers: Record<string, string> = { Accept: c.accept };
  if (c.contentType) headers['Content-Type'] = c.contentType;
  const withBody = { headers, body: c.body.text };
  switch (c.verb) {
    case 'get':
      return { method: 'GET', path: `${named}?${query}`, headers };
    case 'list':
      return { method: 'GET', path: `${base}?${query}`, headers };
    case 'watch':
      // Bounded by the server (timeoutSeconds) and by the client, which reads the first events only.
      query.set('watch', 'true');
      query.set('timeoutSeconds', '1');
      return { method: 'GET', path: `${base}?${query}`, headers, readForMs: 150 };
    case 'create':
      return { method: 'POST', path: `${base}?${query}`, ...withBody };
    case 'update':
      return { method: 'PUT', path: `${named}?${query}`, ...withBody };
    case 'patch':
      return { method: 'PATCH', path: `${named}?${query}`, ...withBody };
    case 'delete':
      return { method: 'DELETE', path: `${named}?${query}`, ...withBody };
    case 'deletecollection':
      return { method: 'DELETE', path: `${base}?${query}`, ...withBody };
    case 'other':
      return { method: c.method, path: `${named}?${query}`, headers };
  }
}

/**
 * The one 5xx kube-apiserver gives for a well-formed request: a read at a resourceVersion not written yet
 * (504 Timeout with the ResourceVersionTooLarge cause), which clients retry.
 */
function isTooLargeResourceVersion(status: number, text: string): boolean {
  if (status !== 504) return false;
  try {
    const body = JSON.parse(text);
    return body.reason === 'Timeout' && body.details?.causes?.[0]?.reason === 'ResourceVersionTooLarge';
  } catch {
    return false;
  }
}

describe('fuzzing the API server', () => {
  let t: TestServer;

  before(async () => {
    t = await startCertManagerServer();
    for (const { path, object } of Object.values(BASE_OBJECTS)) {
      const res = await t.fetch('POST', path, { body: object });
      assert.equal(res.status, 201, `${path}: ${res.text}`);
    }
  });
  after(async () => {
    await t?.close();
  });

  it(`no request gets a 5xx, hangs or stops the server (seed ${SEED}, ${RUNS} runs)`, async () => {
    // Printed first, so that a failure (or a hang the runner kills) can be replayed.
    console.log(`# fuzz: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}`);
    await fc.assert(
      fc.asyncProperty(
        caseArb.filter((c) => !destroysFixtures(c)),
        async (c) => {
          const req = toRequest(c);
          const res = await rawRequest(t, req, REQUEST_DEADLINE_MS);
          assert.ok(
            res.status < 500 || isTooLargeResourceVersion(res.status, res.text),
            `${req.method} ${req.path} (${req.headers?.['Content-Type'] ?? ''}): ${res.status} ${res.text.slice(0, 500)}`,
          );
          const health = await rawRequest(t, { method: 'GET', path: '/healthz' }, REQUEST_DEADLINE_MS);
          assert.equal(health.status, 200, `/healthz after ${req.method} ${req.path}: ${health.text}`);
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
