/**
 * Lists longer than a spread call takes arguments (about 120,000). Objects with more invalid entries: every validator returns one field
 * error per bad label or name, and the lists were joined with `push(...list)`, which overflowed the stack past
 * about 120,000 of them (a 500 `Maximum call stack size exceeded`). Each must be kube-apiserver's 422, for a
 * built-in kind and for cert-manager's validation alike, naming the first thousand fields and counting the
 * rest: all of them made a Status of 118 MB.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_REPORTED_FIELD_ERRORS } from '@certkit/apimachinery';
import type { TestServer } from '@certkit/testenv/apiserver/test-server';
import { COLLECTIONS, startCertManagerServer } from '@certkit/testenv/apiserver/cert-manager-server';
import { eventually } from '@certkit/testenv/eventually';
import { kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

const COUNT = 190_000;

/** COUNT label keys that are not qualified names (each ends with `!`), in under 3 MiB of JSON. */
function invalidLabels(): Record<string, string> {
  const labels: Record<string, string> = {};
  for (let i = 0; i < COUNT; i++) labels[`${i.toString(36)}!`] = '';
  return labels;
}

describe(`objects with ${COUNT} invalid labels`, () => {
  let server: TestServer;
  before(async () => {
    server = await startCertManagerServer();
  });
  after(async () => {
    await server?.close();
  });

  it('a ConfigMap is a 422 naming the first thousand labels, and the server answers on', async () => {
    const res = await server.fetch('POST', COLLECTIONS.configMaps, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'many-labels', labels: invalidLabels() },
      },
    });
    assert.equal(res.status, 422, res.text.slice(0, 300));
    assert.equal(res.json.reason, 'Invalid');
    assert.equal(res.json.details.causes.length, MAX_REPORTED_FIELD_ERRORS);
    assert.deepEqual(res.json.details.causes[0], {
      reason: 'FieldValueInvalid',
      message: res.json.details.causes[0].message,
      field: 'metadata.labels',
    });
    assert.match(
      res.json.details.causes[0].message,
      /^Invalid value: "[0-9a-z]+!": name part must consist of/,
    );
    assert.match(
      res.json.message,
      /^ConfigMap "many-labels" is invalid: \[metadata\.labels: Invalid value: /,
    );
    assert.match(res.json.message, new RegExp(`, and ${COUNT - MAX_REPORTED_FIELD_ERRORS} more errors\\]$`));
    // All 190,000 made 118 MB.
    assert.ok(res.bytes.length < 1_000_000, `${res.bytes.length} bytes`);
    assert.equal((await server.fetch('GET', '/readyz')).status, 200);
  });

  it("a Certificate's secretTemplate is a 422 from cert-manager's validation", async () => {
    const res = await server.fetch('POST', COLLECTIONS.certificates, {
      body: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'many-labels' },
        spec: {
          secretName: 'many-labels',
          dnsNames: ['a.example.com'],
          issuerRef: { name: 'ca' },
          secretTemplate: { labels: invalidLabels() },
        },
      },
    });
    assert.equal(res.status, 422, res.text.slice(0, 300));
    assert.equal(res.json.reason, 'Invalid');
    assert.equal(res.json.details.causes.length, MAX_REPORTED_FIELD_ERRORS);
    assert.equal(res.json.details.causes[0].field, 'spec.secretTemplate.labels');
    assert.match(res.json.message, new RegExp(`, and ${COUNT - MAX_REPORTED_FIELD_ERRORS} more errors\\]$`));
  });
});

describe('other lists longer than a call takes arguments', () => {
  let server: TestServer;
  before(async () => {
    server = await startCertManagerServer();
  });
  after(async () => {
    await server?.close();
  });

  it('a body repeating one key 200,000 times is a 400 under fieldValidation=Strict, a warning under Warn', async () => {
    const rawBody = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dups"},"data":{${'"a":"b",'.repeat(199_999)}"a":"b"}}`;
    const strict = await server.fetch('POST', `${COLLECTIONS.configMaps}?fieldValidation=Strict`, {
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(strict.status, 400, strict.text.slice(0, 300));
    const message: string = strict.json.message;
    const prefix = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ';
    assert.equal(message.slice(0, prefix.length), prefix);
    // Each repeat named, as sigs.k8s.io/json names them.
    assert.equal(message.slice(prefix.length).split(', ').length, 199_999);
    const warn = await server.fetch('POST', `${COLLECTIONS.configMaps}?fieldValidation=Warn`, {
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(warn.status, 201, warn.text.slice(0, 300));
    // One warning: the recorder keeps each text once.
    assert.equal(warn.headers.warning, '299 - "duplicate field \\"data.a\\""');
  });

  it(
    'kubectl get of a resource whose printer column is a wildcard over 300,000 items',
    { skip: kubectlSkip },
    async () => {
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'wilds.lists.certkit.dev' },
        spec: {
          group: 'lists.certkit.dev',
          scope: 'Namespaced',
          names: { plural: 'wilds', singular: 'wild', kind: 'Wild', listKind: 'WildList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              additionalPrinterColumns: [{ name: 'Items', type: 'string', jsonPath: '.spec.items[*]' }],
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      properties: { items: { type: 'array', items: { type: 'integer' } } },
                    },
                  },
                },
              },
            },
          ],
        },
      };
      assert.equal((await server.fetch('POST', COLLECTIONS.crds, { body: crd })).status, 201);
      const wilds = '/apis/lists.certkit.dev/v1/namespaces/default/wilds';
      await eventually(async () => (await server.fetch('GET', wilds)).status === 200, 'wilds served');
      const created = await server.fetch('POST', wilds, {
        body: {
          apiVersion: 'lists.certkit.dev/v1',
          kind: 'Wild',
          metadata: { name: 'many' },
          spec: { items: Array.from({ length: 300_000 }, (_, i) => i % 10) },
        },
      });
      assert.equal(created.status, 201, created.text.slice(0, 300));
      // The Table's cell was a 500 (`Maximum call stack size exceeded`) for everyone listing the resource.
      const kubectl = kubectlFor({ ...process.env, KUBECONFIG: server.kubeconfigPath }, server.dataDir);
      const out = await kubectl.ok('get', 'wilds', '-n', 'default');
      // kube-apiserver's cell is the first value a column's path finds.
      assert.match(out, /^NAME\s+ITEMS\nmany\s+0\n$/);
    },
  );
});
