/**
 * Objects with more invalid entries than a spread call takes arguments: every validator returns one field
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
