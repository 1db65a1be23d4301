import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { formatFieldError, type StoredObject } from '@certkit/apimachinery';
import { parseAllDocuments } from 'yaml';
// Tests may reach into the API server: these are the exact checks it runs on CRDs and custom resources.
import { validateCustomResourceDefinition } from '@certkit/apiserver/registry/crd';
import {
  admitCustomResource,
  type JSONSchemaProps,
  validateStructuralSchema,
} from '@certkit/apiserver/registry/schema';
import { certManagerCrds } from './crds.ts';
import { CRDS_YAML_PATH, renderCrdsYaml } from './render-crds.ts';
import { loadExamples } from '@certkit/testenv/cert-manager/examples';

const crds = certManagerCrds();

function crdFor(kind: string) {
  const crd = crds.find((c) => c.spec.names.kind === kind);
  assert.ok(crd, `no CRD for ${kind}`);
  return crd;
}

function schemaFor(kind: string): JSONSchemaProps {
  return crdFor(kind).spec.versions[0].schema!.openAPIV3Schema as JSONSchemaProps;
}

/** Every property path a schema declares (`spec.usages[]`, `spec.secretTemplate.labels{}`), stopping at open objects. */
function declaredPaths(schema: JSONSchemaProps, path = '', out = new Set<string>()): Set<string> {
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const child = path ? `${path}.${key}` : key;
    out.add(child);
    declaredPaths(property, child, out);
  }
  if (schema.items) {
    out.add(`${path}[]`);
    declaredPaths(schema.items, `${path}[]`, out);
  }
  if (typeof schema.additionalProperties === 'object') {
    out.add(`${path}{}`);
    declaredPaths(schema.additionalProperties, `${path}{}`, out);
  }
  return out;
}

/** The declared paths a value actually uses, named as declaredPaths names them. */
function usedPaths(value: unknown, schema: JSONSchemaProps | undefined, path = '', out = new Set<string>()) {
  if (schema === undefined || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    if (value.length > 0 && schema.items) out.add(`${path}[]`);
    for (const item of value) usedPaths(item, schema.items, `${path}[]`, out);
    return out;
  }
  for (const [key, child] of Object.entries(value)) {
    const property = schema.properties?.[key];
    if (property) {
      const childPath = path ? `${path}.${key}` : key;
      out.add(childPath);
      usedPaths(child, property, childPath, out);
    } else if (typeof schema.additionalProperties === 'object') {
      out.add(`${path}{}`);
      usedPaths(child, schema.additionalProperties, `${path}{}`, out);
    }
  }
  return out;
}

function walkSchemas(schema: JSONSchemaProps, visit: (s: JSONSchemaProps, path: string) => void, path = '') {
  visit(schema, path);
  for (const [key, property] of Object.entries(schema.properties ?? {}))
    walkSchemas(property, visit, `${path}.${key}`);
  if (schema.items) walkSchemas(schema.items, visit, `${path}[]`);
  if (typeof schema.additionalProperties === 'object')
    walkSchemas(schema.additionalProperties, visit, `${path}{}`);
}

describe('certManagerCrds', () => {
  it('defines the four cert-manager.io/v1 and two acme.cert-manager.io/v1 kinds with their names, scopes and short names', () => {
    assert.deepEqual(
      crds.map((c) => ({
        name: c.metadata!.name,
        kind: c.spec.names.kind,
        scope: c.spec.scope,
        shortNames: c.spec.names.shortNames,
        categories: c.spec.names.categories,
        versions: c.spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources]),
      })),
      [
        ['certificates', 'Certificate', 'Namespaced', ['cert', 'certs']],
        ['certificaterequests', 'CertificateRequest', 'Namespaced', ['cr', 'crs']],
        ['issuers', 'Issuer', 'Namespaced', ['iss']],
        ['clusterissuers', 'ClusterIssuer', 'Cluster', ['ciss']],
      ]
        .map(([plural, kind, scope, shortNames]) => ({
          name: `${plural}.cert-manager.io`,
          kind,
          scope,
          shortNames,
          categories: ['cert-manager'],
          versions: [['v1', true, true, { status: {} }]],
        }))
        .concat(
          // No short names at all (not an empty list), as cert-manager's CRDs.
          ['Order', 'Challenge'].map((kind) => ({
            name: `${kind.toLowerCase()}s.acme.cert-manager.io`,
            kind,
            scope: 'Namespaced',
            shortNames: undefined as unknown as string[],
            categories: ['cert-manager', 'cert-manager-acme'],
            versions: [['v1', true, true, { status: {} }]],
          })),
        ),
    );
    for (const kind of ['Order', 'Challenge']) assert.equal('shortNames' in crdFor(kind).spec.names, false);
  });

  it('has cert-manager’s printer columns', () => {
    const columns = (kind: string) =>
      crdFor(kind).spec.versions[0].additionalPrinterColumns!.map(
        (c) => `${c.name}:${c.priority ?? 0}:${c.jsonPath}`,
      );
    const ready = (f: string) => `.status.conditions[?(@.type == "Ready")].${f}`;
    assert.deepEqual(columns('Certificate'), [
      `Ready:0:${ready('status')}`,
      'Secret:0:.spec.secretName',
      'Issuer:1:.spec.issuerRef.name',
      `Status:1:${ready('message')}`,
      'Expiration:1:.status.notAfter',
      'Age:0:.metadata.creationTimestamp',
    ]);
    assert.deepEqual(columns('CertificateRequest'), [
      'Approved:0:.status.conditions[?(@.type == "Approved")].status',
      'Denied:0:.status.conditions[?(@.type == "Denied")].status',
      `Ready:0:${ready('status')}`,
      'Issuer:0:.spec.issuerRef.name',
      'Requester:0:.spec.username',
      `Status:1:${ready('message')}`,
      'Age:0:.metadata.creationTimestamp',
    ]);
    for (const kind of ['Issuer', 'ClusterIssuer']) {
      assert.deepEqual(columns(kind), [
        `Ready:0:${ready('status')}`,
        `Status:1:${ready('message')}`,
        'Age:0:.metadata.creationTimestamp',
      ]);
    }
    assert.deepEqual(columns('Order'), [
      'State:0:.status.state',
      'Issuer:1:.spec.issuerRef.name',
      'Reason:1:.status.reason',
      'Age:0:.metadata.creationTimestamp',
    ]);
    assert.deepEqual(columns('Challenge'), [
      'State:0:.status.state',
      'Domain:0:.spec.dnsName',
      'Reason:1:.status.reason',
      'Age:0:.metadata.creationTimestamp',
    ]);
    for (const kind of ['Certificate', 'CertificateRequest', 'Order', 'Challenge']) {
      assert.deepEqual(crdFor(kind).spec.versions[0].selectableFields, [
        { jsonPath: '.spec.issuerRef.group' },
        { jsonPath: '.spec.issuerRef.kind' },
        { jsonPath: '.spec.issuerRef.name' },
      ]);
    }
  });

  for (const crd of crds) {
    it(`${crd.spec.names.kind}: passes the API server's CRD and structural schema checks`, () => {
      const schema = crd.spec.versions[0].schema!.openAPIV3Schema as JSONSchemaProps;
      const structural = validateStructuralSchema(schema, 'spec.versions[0].schema.openAPIV3Schema');
      assert.deepEqual(structural.map(formatFieldError), []);
      const errors = validateCustomResourceDefinition(
        structuredClone(crd) as unknown as StoredObject,
        undefined,
      );
      assert.deepEqual(errors.map(formatFieldError), []);
    });

    it(`${crd.spec.names.kind}: carries no defaults and describes every field`, () => {
      const schema = crd.spec.versions[0].schema!.openAPIV3Schema as JSONSchemaProps;
      const problems: string[] = [];
      walkSchemas(schema, (s, path) => {
        if (s.default !== undefined) problems.push(`${path}: has a default`);
        const isItem = path.endsWith('[]') || path.endsWith('{}');
        if (!s.description && !isItem && path !== '.metadata') problems.push(`${path}: no description`);
      });
      assert.deepEqual(problems, []);
    });
  }

  it('cleanupPolicy is an OnDelete/Never enum on Certificate', () => {
    const property = schemaFor('Certificate').properties!.spec.properties!.cleanupPolicy;
    assert.deepEqual(property.enum, ['OnDelete', 'Never']);
    const { errors } = admitCustomResource(schemaFor('Certificate'), {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'c' },
      spec: { secretName: 's', issuerRef: { name: 'i' }, cleanupPolicy: 'Sometimes' },
    });
    assert.deepEqual(errors.map(formatFieldError), [
      'spec.cleanupPolicy: Unsupported value: "Sometimes": supported values: "OnDelete", "Never"',
    ]);
  });

  it('Order and Challenge states are the ACME state enum; Challenge types are upper case', () => {
    const STATES = ['valid', 'ready', 'pending', 'processing', 'invalid', 'expired', 'errored'];
    const order = schemaFor('Order').properties!;
    assert.deepEqual(order.status.properties!.state.enum, STATES);
    assert.deepEqual(order.status.properties!.authorizations.items!.properties!.initialState.enum, STATES);
    const challenge = schemaFor('Challenge').properties!;
    assert.deepEqual(challenge.status.properties!.state.enum, STATES);
    assert.deepEqual(challenge.spec.properties!.type.enum, ['HTTP-01', 'DNS-01']);
    assert.deepEqual(challenge.spec.required, [
      'authorizationURL',
      'dnsName',
      'issuerRef',
      'key',
      'solver',
      'token',
      'type',
      'url',
    ]);
    assert.deepEqual(order.spec.required, ['issuerRef', 'request']);
    const { errors } = admitCustomResource(schemaFor('Challenge'), {
      apiVersion: 'acme.cert-manager.io/v1',
      kind: 'Challenge',
      metadata: { name: 'c' },
      spec: {
        url: 'u',
        authorizationURL: 'a',
        dnsName: 'd',
        type: 'http-01',
        token: 't',
        key: 'k',
        solver: {},
      },
      status: { state: 'done' },
    });
    assert.deepEqual(errors.map(formatFieldError).sort(), [
      'spec.issuerRef: Required value',
      'spec.type: Unsupported value: "http-01": supported values: "HTTP-01", "DNS-01"',
      'status.state: Unsupported value: "done": supported values: "valid", "ready", "pending", "processing", "invalid", "expired", "errored"',
    ]);
  });

  it('keeps a webhook solver config of any JSON type as written (apiextensions JSON)', () => {
    for (const config of [{ a: { b: [1, 'x'] } }, 'text', [1, 2], 7, true]) {
      const issuer = {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: 'i' },
        spec: {
          acme: {
            server: 'https://acme.example.com/directory',
            privateKeySecretRef: { name: 'k' },
            solvers: [{ dns01: { webhook: { groupName: 'g', solverName: 's', config } } }],
          },
        },
      };
      const result = admitCustomResource(schemaFor('Issuer'), structuredClone(issuer));
      assert.deepEqual(result.errors.map(formatFieldError), [], JSON.stringify(config));
      assert.deepEqual(result.object, issuer);
    }
  });

  it("holds Gateway parentRefs to the Gateway API's bounds", () => {
    const { errors } = admitCustomResource(schemaFor('Issuer'), {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'i' },
      spec: {
        acme: {
          server: 'https://acme.example.com/directory',
          privateKeySecretRef: { name: 'k' },
          solvers: [
            {
              http01: {
                gatewayHTTPRoute: {
                  parentRefs: [{ name: 'gw', kind: 'Gateway', namespace: 'Gateway_NS', port: 0 }],
                },
              },
            },
          ],
        },
      },
    });
    const at = 'spec.acme.solvers[0].http01.gatewayHTTPRoute.parentRefs[0]';
    assert.deepEqual(errors.map(formatFieldError).sort(), [
      `${at}.namespace: Invalid value: "Gateway_NS": ${at}.namespace in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`,
      `${at}.port: Invalid value: 0: ${at}.port in body should be greater than or equal to 1`,
    ]);
  });

  it("a Challenge's solver has the same schema as an issuer's solvers", () => {
    const solvers = schemaFor('ClusterIssuer').properties!.spec.properties!.acme.properties!.solvers.items;
    assert.deepEqual(schemaFor('Challenge').properties!.spec.properties!.solver, solvers);
  });

  it('still prunes fields cert-manager does not know (schemas are closed outside ACME solvers)', () => {
    const { pruned } = admitCustomResource(schemaFor('Certificate'), {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'c' },
      spec: {
        secretName: 's',
        issuerRef: { name: 'i', namespace: 'x' },
        dnsName: ['a'],
        privateKey: { bits: 1 },
      },
    });
    assert.deepEqual(pruned.sort(), ['spec.dnsName', 'spec.issuerRef.namespace', 'spec.privateKey.bits']);
  });
});

describe('example manifests', () => {
  const examples = loadExamples();

  it('cover every kind', () => {
    assert.deepEqual([...new Set(examples.map((e) => e.object.kind))].sort(), [
      'Certificate',
      'CertificateRequest',
      'Challenge',
      'ClusterIssuer',
      'Issuer',
      'Order',
    ]);
  });

  for (const { file, object } of examples) {
    it(`${file} ${object.kind}/${object.metadata.name}: admitted with nothing pruned, unchanged`, () => {
      const result = admitCustomResource(schemaFor(object.kind!), object);
      assert.deepEqual(result.pruned, []);
      assert.deepEqual(result.errors.map(formatFieldError), []);
      assert.deepEqual(result.object, object);
    });
  }

  for (const kind of ['Certificate', 'CertificateRequest', 'Issuer', 'ClusterIssuer', 'Order', 'Challenge']) {
    it(`${kind}: together they use every field the schema declares`, () => {
      const schema = schemaFor(kind);
      const used = new Set<string>();
      for (const e of examples.filter((x) => x.object.kind === kind)) usedPaths(e.object, schema, '', used);
      // Issuer and ClusterIssuer share one spec; their examples count for both.
      if (kind.endsWith('Issuer')) {
        for (const e of examples.filter((x) => x.object.kind?.endsWith('Issuer')))
          usedPaths(e.object, schema, '', used);
      }
      // A Challenge's solver is an issuer's solver (same schema, tested above): the issuer examples cover it.
      const missing = [...declaredPaths(schema)].filter(
        (p) => !used.has(p) && !(kind === 'Challenge' && p.startsWith('spec.solver.')),
      );
      assert.deepEqual(missing, []);
    });
  }
});

describe('deploy/crds.yaml', () => {
  it('is what render-crds.ts renders (run it after changing a schema)', () => {
    assert.equal(readFileSync(CRDS_YAML_PATH, 'utf8'), renderCrdsYaml());
  });

  it('parses back to the same CRDs', () => {
    const documents = parseAllDocuments(readFileSync(CRDS_YAML_PATH, 'utf8')).map((d) => d.toJSON());
    assert.deepEqual(documents, certManagerCrds());
  });
});
