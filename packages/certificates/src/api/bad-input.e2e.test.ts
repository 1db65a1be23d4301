/**
 * Bad input against the real API server with cert-manager's CRDs and admission: each kind of wrongly typed
 * or oversized input gets kube-apiserver's 4xx Status naming the field, whatever the verb, never a 500.
 * One row per kind of input; every row creates its own object first when the verb needs one.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '@certkit/testenv/apiserver/test-server';
import {
  COLLECTIONS,
  rawRequest,
  startCertManagerServer,
} from '@certkit/testenv/apiserver/cert-manager-server';
import type { Challenge } from './acme-types.ts';
import { example } from '@certkit/testenv/cert-manager/examples';

type Verb = 'create' | 'update' | 'merge' | 'strategic' | 'json' | 'apply' | 'delete';

interface Row {
  title: string;
  /** Which collection the object lives in. */
  collection: keyof typeof COLLECTIONS;
  verb: Verb;
  /** The whole object (create, update, apply) or the patch document; raw text when a string. */
  body: (name: string) => unknown;
  code: number;
  reason: string;
  message: RegExp;
}

const certificate = (
  name: string,
  spec: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
) => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name, ...meta },
  spec: { secretName: `${name}-tls`, issuerRef: { name: 'ca' }, dnsNames: ['a.example.com'], ...spec },
});

const configMap = (name: string, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...meta },
  data: { key: 'value' },
});

const blob = (name: string, spec: unknown) => ({
  apiVersion: 'fuzz.certkit.dev/v1',
  kind: 'Blob',
  metadata: { name },
  spec,
});

/** A value nested `depth` objects deep (the value itself is the first level). */
function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** Nested objects as text, for depths JSON.stringify would refuse to build. */
function nestedText(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

const ROWS: Row[] = [
  // metadata.ownerReferences and metadata.finalizers of the wrong type, on built-in and custom resources.
  {
    title: 'ownerReferences as a string on a ConfigMap (create)',
    collection: 'configMaps',
    verb: 'create',
    body: (n) => configMap(n, { ownerReferences: 'owner' }),
    code: 400,
    reason: 'BadRequest',
    message:
      /ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta\.metadata\.ownerReferences of type \[\]v1\.OwnerReference$/,
  },
  {
    title: 'ownerReferences as a string on a Certificate (merge patch)',
    collection: 'certificates',
    verb: 'merge',
    body: () => ({ metadata: { ownerReferences: 'owner' } }),
    code: 422,
    reason: 'Invalid',
    message:
      /^ "" is invalid: patch: Invalid value: ".*": json: cannot unmarshal string into Go struct field ObjectMeta\.ownerReferences of type \[\]v1\.OwnerReference$/,
  },
  {
    title: 'ownerReferences as an object on a Certificate (create)',
    collection: 'certificates',
    verb: 'create',
    body: (n) => certificate(n, {}, { ownerReferences: { a: 1 } }),
    code: 400,
    reason: 'BadRequest',
    message:
      /^Certificate in version "v1" cannot be handled as a Certificate: json: cannot unmarshal object into Go struct field ObjectMeta\.ownerReferences of type \[\]v1\.OwnerReference$/,
  },
  {
    title: 'an ownerReference that is a number (strategic merge patch)',
    collection: 'configMaps',
    verb: 'strategic',
    body: () => ({ metadata: { ownerReferences: [5] } }),
    code: 422,
    reason: 'Invalid',
    message: /Go struct field ObjectMeta\.metadata\.ownerReferences of type v1\.OwnerReference$/,
  },
  {
    title: 'an ownerReference that is null (create): the zero reference, refused field by field',
    collection: 'configMaps',
    verb: 'create',
    body: (n) => configMap(n, { ownerReferences: [null] }),
    code: 422,
    reason: 'Invalid',
    message: /metadata\.ownerReferences\[0\]\.apiVersion: Invalid value: "": version must not be empty/,
  },
  {
    title: 'an ownerReference uid of the wrong type (JSON patch)',
    collection: 'certificates',
    verb: 'json',
    body: () => [
      {
        op: 'add',
        path: '/metadata/ownerReferences',
        value: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 5 }],
      },
    ],
    code: 422,
    reason: 'Invalid',
    message: /Go struct field OwnerReference\.ownerReferences\.uid of type types\.UID$/,
  },
  {
    title: 'finalizers as a string on a Certificate (create)',
    collection: 'certificates',
    verb: 'create',
    body: (n) => certificate(n, {}, { finalizers: 'x' }),
    code: 400,
    reason: 'BadRequest',
    message:
      /Certificate: json: cannot unmarshal string into Go struct field ObjectMeta\.finalizers of type \[\]string$/,
  },
  {
    title: 'finalizers holding a number on a ConfigMap (merge patch)',
    collection: 'configMaps',
    verb: 'merge',
    body: () => ({ metadata: { finalizers: [5] } }),
    code: 422,
    reason: 'Invalid',
    message:
      /patch: Invalid value: .*json: cannot unmarshal number into Go struct field ObjectMeta\.metadata\.finalizers of type string$/,
  },
  {
    title: 'finalizers as an object on a ConfigMap (update)',
    collection: 'configMaps',
    verb: 'update',
    body: (n) => configMap(n, { finalizers: { a: 1 } }),
    code: 400,
    reason: 'BadRequest',
    message:
      /ConfigMap: json: cannot unmarshal object into Go struct field ObjectMeta\.metadata\.finalizers of type \[\]string$/,
  },
  {
    title: 'a finalizer that is null (apply): the empty name, refused',
    collection: 'configMaps',
    verb: 'apply',
    body: (n) => configMap(n, { finalizers: [null] }),
    code: 422,
    reason: 'Invalid',
    message: /metadata\.finalizers\[0\]: Invalid value: "": name part must be non-empty/,
  },
  {
    title: 'finalizers as a number on a Certificate (apply)',
    collection: 'certificates',
    verb: 'apply',
    body: (n) => certificate(n, {}, { finalizers: 5 }),
    code: 400,
    reason: 'BadRequest',
    message:
      /Certificate: json: cannot unmarshal number into Go struct field ObjectMeta\.finalizers of type \[\]string$/,
  },
  // The rest of ObjectMeta, decoded the same way.
  {
    title: 'metadata as a string on a ConfigMap (create)',
    collection: 'configMaps',
    verb: 'create',
    body: () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: 'x' }),
    code: 400,
    reason: 'BadRequest',
    message:
      /ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap\.metadata of type v1\.ObjectMeta$/,
  },
  {
    title: 'metadata as a string on a Certificate (update)',
    collection: 'certificates',
    verb: 'update',
    body: (n) => ({ ...certificate(n), metadata: 'x' }),
    code: 400,
    reason: 'BadRequest',
    message: /Certificate: json: cannot unmarshal string into Go value of type v1\.ObjectMeta$/,
  },
  {
    title: 'generateName as a number (create)',
    collection: 'configMaps',
    verb: 'create',
    body: () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 5 } }),
    code: 400,
    reason: 'BadRequest',
    message: /Go struct field ObjectMeta\.metadata\.generateName of type string$/,
  },
  {
    title: 'labels as a string on a Certificate (create)',
    collection: 'certificates',
    verb: 'create',
    body: (n) => certificate(n, {}, { labels: 'x' }),
    code: 400,
    reason: 'BadRequest',
    message: /Go struct field ObjectMeta\.labels of type map\[string\]string$/,
  },
  {
    title: 'an annotation value that is a number (merge patch)',
    collection: 'certificates',
    verb: 'merge',
    body: () => ({ metadata: { annotations: { a: 5 } } }),
    code: 422,
    reason: 'Invalid',
    message: /Go struct field ObjectMeta\.annotations of type string$/,
  },
  {
    title: 'deletionGracePeriodSeconds as a fraction (create)',
    collection: 'configMaps',
    verb: 'create',
    body: (n) => configMap(n, { deletionGracePeriodSeconds: 1.5 }),
    code: 400,
    reason: 'BadRequest',
    message:
      /cannot unmarshal number 1\.5 into Go struct field ObjectMeta\.metadata\.deletionGracePeriodSeconds of type int64$/,
  },
  {
    title: 'creationTimestamp as a number (create)',
    collection: 'certificates',
    verb: 'create',
    body: (n) => certificate(n, {}, { creationTimestamp: 5 }),
    code: 400,
    reason: 'BadRequest',
    message: /Go struct field ObjectMeta\.creationTimestamp of type string$/,
  },
  {
    title: 'managedFields as a string (create)',
    collection: 'configMaps',
    verb: 'create',
    body: (n) => configMap(n, { managedFields: 'x' }),
    code: 400,
    reason: 'BadRequest',
    message: /Go struct field ObjectMeta\.metadata\.managedFields of type \[\]v1\.ManagedFieldsEntry$/,
  },
  // Certificate fields of the wrong type: the CRD schema refuses them before cert-manager's validation runs.
  ...(
    [
      ['usages', 'x', 'array', 'string'],
      ['ipAddresses', 5, 'array', 'integer'],
      ['uris', { a: 1 }, 'array', 'object'],
      ['otherNames', 'x', 'array', 'string'],
      ['additionalOutputFormats', true, 'array', 'boolean'],
      ['emailAddresses', 'a@example.com', 'array', 'string'],
      ['renewBeforePercentage', '50%', 'integer', 'string'],
      ['commonName', 5, 'string', 'integer'],
    ] as const
  ).flatMap(([field, value, type, found]): Row[] =>
    (['create', 'update', 'merge', 'json', 'apply'] as const).map((verb) => ({
      title: `spec.${field} as ${JSON.stringify(value)} (${verb})`,
      collection: 'certificates',
      verb,
      body: (n: string) =>
        verb === 'merge'
          ? { spec: { [field]: value } }
          : verb === 'json'
            ? [{ op: 'add', path: `/spec/${field}`, value }]
            : certificate(n, { [field]: value }),
      code: 422,
      reason: 'Invalid',
      message: new RegExp(
        `^Certificate\\.cert-manager\\.io "[a-z0-9-]+" is invalid: spec\\.${field}: Invalid value: "${found}": spec\\.${field} in body must be of type ${type}: "${found}"$`,
      ),
    })),
  ),
  {
    title: 'a usage that is a number (create): the item, refused by the schema alone',
    collection: 'certificates',
    verb: 'create',
    body: (n) => certificate(n, { usages: [5] }),
    code: 422,
    reason: 'Invalid',
    // kube-openapi checks the enum too, after the type.
    message:
      /is invalid: \[spec\.usages\[0\]: Invalid value: "integer": spec\.usages\[0\] in body must be of type string: "integer", spec\.usages\[0\]: Unsupported value: 5: /,
  },
  {
    title: 'DeleteOptions with dryRun as a number (delete)',
    collection: 'configMaps',
    verb: 'delete',
    body: () => ({ dryRun: 5 }),
    code: 400,
    reason: 'BadRequest',
    message: /^json: cannot unmarshal number into Go struct field DeleteOptions\.dryRun of type \[\]string$/,
  },
  // Nesting: the limit holds for every body and for what a patch builds.
  ...(['create', 'update', 'merge', 'strategic', 'json'] as const).map((verb): Row => ({
    title: `JSON nested 10^4 deep (${verb})`,
    collection: 'configMaps',
    verb,
    body: () =>
      verb === 'json'
        ? `[{"op":"add","path":"/data","value":${nestedText(10_000)}}]`
        : verb === 'merge' || verb === 'strategic'
          ? `{"metadata":${nestedText(10_000)}}`
          : `{"apiVersion":"v1","kind":"ConfigMap","metadata":${nestedText(10_000)}}`,
    code: 400,
    reason: 'BadRequest',
    message: /json parse error: invalid character '\{' exceeded max depth$/,
  })),
  {
    title: 'JSON nested 10^4 deep (apply)',
    collection: 'blobs',
    verb: 'apply',
    body: () => `{"apiVersion":"fuzz.certkit.dev/v1","kind":"Blob","spec":${nestedText(10_000)}}`,
    code: 400,
    reason: 'BadRequest',
    message: /^error decoding YAML: invalid character '\{' exceeded max depth$/,
  },
  {
    title: 'a JSON patch that copies a value into itself until it is nested past the limit',
    collection: 'blobs',
    verb: 'json',
    // Each document is 1500 levels deep; the copy puts one at the bottom of the other.
    body: () => [
      { op: 'add', path: '/spec/deep', value: nested(1500) },
      { op: 'copy', from: '/spec/deep', path: `/spec/deep${'/a'.repeat(1499)}` },
    ],
    code: 422,
    reason: 'Invalid',
    message: /^ "" is invalid: patch: Invalid value: ".*": invalid character '\{' exceeded max depth$/,
  },
];

describe('bad input on the API server with cert-manager', () => {
  let t: TestServer;

  before(async () => {
    t = await startCertManagerServer();
  });
  after(async () => {
    await t?.close();
  });

  let created = 0;
  /** A valid object of the row's collection, for the verbs that change one. */
  async function existing(collection: keyof typeof COLLECTIONS): Promise<{ name: string; rv: string }> {
    const name = `bad-input-${created++}`;
    const body =
      collection === 'certificates'
        ? certificate(name)
        : collection === 'blobs'
          ? blob(name, { a: 1 })
          : configMap(name);
    const res = await t.fetch('POST', COLLECTIONS[collection], { body });
    assert.equal(res.status, 201, res.text);
    return { name, rv: res.json.metadata.resourceVersion };
  }

  for (const row of ROWS) {
    it(row.title, async () => {
      const collection = COLLECTIONS[row.collection];
      let name = `bad-input-${created++}`;
      let rv = '';
      if (row.verb !== 'create') ({ name, rv } = await existing(row.collection));
      let body = row.body(name);
      if (row.verb === 'update' && typeof body === 'object' && body !== null) {
        const meta = (body as { metadata?: unknown }).metadata;
        // Updates of custom resources need the resourceVersion; a metadata that is not an object stays as it is.
        if (typeof meta === 'object' && meta !== null)
          body = { ...body, metadata: { ...meta, resourceVersion: rv } };
      }
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const contentType = {
        create: 'application/json',
        update: 'application/json',
        delete: 'application/json',
        merge: 'application/merge-patch+json',
        strategic: 'application/strategic-merge-patch+json',
        json: 'application/json-patch+json',
        apply: 'application/apply-patch+yaml',
      }[row.verb];
      const method =
        { create: 'POST', update: 'PUT', delete: 'DELETE', apply: 'PATCH' }[row.verb as string] ?? 'PATCH';
      const path =
        row.verb === 'create'
          ? collection
          : `${collection}/${name}${row.verb === 'apply' ? '?fieldManager=bad-input&force=true' : ''}`;
      const res = await rawRequest(t, { method, path, body: text, headers: { 'Content-Type': contentType } });
      const status = JSON.parse(res.text);
      assert.equal(res.status, row.code, res.text.slice(0, 2000));
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, row.reason);
      assert.match(status.message, row.message);
      // Nothing was written: the object is as it was (or absent).
      const after = await t.fetch('GET', `${collection}/${name}`);
      if (row.verb === 'create') assert.equal(after.status, 404);
      else assert.equal(after.json.metadata.resourceVersion, rv);
    });
  }

  it('an object nested up to the limit is accepted and then served, patched and applied by every verb', async () => {
    const name = 'deepest';
    // The object is the first level, spec the second: 2000 levels of objects, the limit.
    const deep = nested(1999);
    const created = await t.fetch('POST', COLLECTIONS.blobs, { body: blob(name, deep) });
    assert.equal(created.status, 201, `create: ${created.text.slice(0, 500)}`);
    const url = `${COLLECTIONS.blobs}/${name}`;
    const patches: [string, unknown][] = [
      ['application/merge-patch+json', { metadata: { labels: { merged: 'yes' } }, spec: { b: nested(100) } }],
      ['application/json-patch+json', [{ op: 'replace', path: '/spec/b', value: nested(1998) }]],
    ];
    for (const [contentType, patch] of patches) {
      const res = await t.fetch('PATCH', url, { body: patch, headers: { 'Content-Type': contentType } });
      assert.equal(res.status, 200, `${contentType}: ${res.text.slice(0, 500)}`);
    }
    const applied = await t.fetch('PATCH', `${url}?fieldManager=deep&force=true`, {
      // Within the limit with its managedFields too, whose FieldsV1 nest six levels below metadata.
      body: blob(name, { c: nested(1980) }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    assert.equal(applied.status, 200, `apply: ${applied.text.slice(0, 500)}`);
    const read = await t.fetch('GET', url);
    assert.equal(read.status, 200);
    assert.equal(read.json.metadata.labels.merged, 'yes');
    // managedFields record every field about six levels below the object's root (metadata, the list, the
    // entry, fieldsV1): for fields near the limit they nest past it, as FieldsV1 do in kube-apiserver, and
    // are sent back without them (an update keeps them).
    const { managedFields: _, ...metadata } = read.json.metadata;
    const current = { ...read.json, metadata };
    const updated = await t.fetch('PUT', url, { body: { ...current, spec: { ...current.spec, d: 1 } } });
    assert.equal(updated.status, 200, `update: ${updated.text.slice(0, 500)}`);
    const deleted = await t.fetch('DELETE', url);
    assert.equal(deleted.status, 200, deleted.text.slice(0, 500));
  });

  describe('ACME objects: cert-manager’s webhook rules as 422 Status naming the field', () => {
    /** Creates the example Order or Challenge under a fresh name, with its status written as the controller would. */
    async function createAcme(kind: 'Order' | 'Challenge') {
      const object = example(kind, kind === 'Order' ? 'web-1-2963424813' : 'web-1-2963424813-1104467473');
      const collection = kind === 'Order' ? COLLECTIONS.orders : COLLECTIONS.challenges;
      const { status, ...withoutStatus } = object;
      const name = `acme-${created++}`;
      const res = await t.fetch('POST', collection, {
        body: { ...withoutStatus, metadata: { ...object.metadata, name } },
      });
      assert.equal(res.status, 201, res.text);
      const url = `${collection}/${name}`;
      const withStatus = await t.fetch('PUT', `${url}/status`, { body: { ...res.json, status } });
      assert.equal(withStatus.status, 200, withStatus.text);
      return { url, current: withStatus.json };
    }

    function assertInvalid(
      res: { status: number; text: string; json: any },
      kind: string,
      causes: string[][],
    ) {
      assert.equal(res.status, 422, res.text);
      assert.equal(res.json.kind, 'Status');
      assert.equal(res.json.reason, 'Invalid');
      assert.equal(res.json.details.kind, kind);
      assert.deepEqual(
        res.json.details.causes.map((c: { field: string; reason: string; message: string }) => [
          c.field,
          c.reason,
          c.message,
        ]),
        causes,
      );
    }

    it('an Order whose spec.request changes', async () => {
      const { url, current } = await createAcme('Order');
      const res = await t.fetch('PUT', url, {
        body: { ...current, spec: { ...current.spec, request: Buffer.from('other').toString('base64') } },
      });
      assertInvalid(res, 'Order', [
        ['spec.request', 'FieldValueForbidden', 'Forbidden: field is immutable once set'],
      ]);
      assert.match(
        res.json.message,
        /^Order\.acme\.cert-manager\.io "acme-\d+" is invalid: spec\.request: Forbidden/,
      );
    });

    it('an Order status update that rewrites what the ACME server said (merge patch on /status)', async () => {
      const { url } = await createAcme('Order');
      const res = await t.fetch('PATCH', `${url}/status`, {
        body: { status: { url: 'https://acme.example.com/order/2', authorizations: [] } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(res.status, 422, res.text);
      const fields = res.json.details.causes.map((c: { field: string }) => c.field);
      assert.deepEqual(fields.slice(0, 3), [
        'status.url',
        'status.authorizations',
        'status.authorizations[0].url',
      ]);
      // An update that only moves the state on is fine.
      const ok = await t.fetch('PATCH', `${url}/status`, {
        body: { status: { state: 'invalid', reason: 'authorization failed' } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(ok.status, 200, ok.text);
    });

    it('a Challenge whose spec changes (server-side apply)', async () => {
      const { url, current } = await createAcme('Challenge');
      const res = await t.fetch('PATCH', `${url}?fieldManager=bad-input&force=true`, {
        body: {
          apiVersion: current.apiVersion,
          kind: current.kind,
          metadata: { name: current.metadata.name },
          spec: { ...current.spec, key: 'another-key-authorization' },
        },
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      });
      assertInvalid(res, 'Challenge', [
        ['spec', 'FieldValueForbidden', 'Forbidden: challenge spec is immutable after creation'],
      ]);
    });

    it('a Challenge with a lower-case type (the CRD enum)', async () => {
      const object = example('Challenge', 'web-1-2963424813-1104467473') as Challenge;
      const res = await t.fetch('POST', COLLECTIONS.challenges, {
        body: { ...object, metadata: { name: 'bad-type' }, spec: { ...object.spec, type: 'http-01' } },
      });
      assertInvalid(res, 'Challenge', [
        [
          'spec.type',
          'FieldValueNotSupported',
          'Unsupported value: "http-01": supported values: "HTTP-01", "DNS-01"',
        ],
      ]);
    });

    it('an ACME Issuer with a malformed solver and provider', async () => {
      const res = await t.fetch('POST', COLLECTIONS.issuers, {
        body: {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Issuer',
          metadata: { name: 'bad-acme' },
          spec: {
            acme: {
              // The CRD requires server; an empty one gets past it to the webhook's rule.
              server: '',
              privateKeySecretRef: { name: 'acme-key' },
              solvers: [
                {
                  http01: { ingress: {} },
                  dns01: { cloudflare: { apiTokenSecretRef: { name: 'cf', key: 'k' } } },
                },
                { dns01: { rfc2136: { nameserver: '[::1' }, nameservers: ['8.8.8.8'] } },
              ],
            },
          },
        },
      });
      assertInvalid(res, 'Issuer', [
        ['spec.acme.server', 'FieldValueRequired', 'Required value: acme server URL is a required field'],
        [
          'spec.acme.solvers[0]',
          'FieldValueForbidden',
          'Forbidden: may not specify more than one solver type in a single solver',
        ],
        [
          'spec.acme.solvers[1].dns01.nameservers[0]',
          'FieldValueInvalid',
          'Invalid value: "8.8.8.8": must be in the format <ip address>:<port>',
        ],
        [
          'spec.acme.solvers[1].dns01.rfc2136.nameserver',
          'FieldValueInvalid',
          'Invalid value: "[::1": nameserver must be set in the form host:port where host is an IPv4 address, an enclosed IPv6 address or a hostname and port is an optional port number.',
        ],
      ]);
    });
  });

  it('a list at a resourceVersion not written yet is 504 "Too large resource version", as kube-apiserver', async () => {
    for (const collection of [COLLECTIONS.certificates, COLLECTIONS.configMaps]) {
      const res = await t.fetch(
        'GET',
        `${collection}?resourceVersionMatch=Exact&resourceVersion=99999999999`,
      );
      assert.equal(res.status, 504, res.text);
      assert.equal(res.json.reason, 'Timeout');
      assert.match(res.json.message, /^Timeout: Too large resource version: 99999999999, current: \d+$/);
      assert.deepEqual(res.json.details.causes, [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
    }
  });
});
