import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { MAX_JSON_DEPTH } from '../decode/json-depth.ts';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Create, update and delete bodies in YAML, over raw HTTP: kube-apiserver's YAML serializer decodes them as
 * it decodes JSON, and answers in JSON still (the Accept header, not the body, picks the response's type).
 */

let t: TestServer;
const NS = 'yaml-bodies';
const configMaps = `/api/v1/namespaces/${NS}/configmaps`;
const YAML = { 'Content-Type': 'application/yaml' };

before(async () => {
  t = await startTestServer();
  const ns = await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
});
after(async () => {
  await t.close();
});

describe('YAML request bodies', () => {
  it('POST creates from block-style YAML and answers in JSON', async () => {
    const res = await t.fetch('POST', configMaps, {
      rawBody:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: created\n  labels: {from: yaml}\ndata:\n  a: "1"\n  b: two\n',
      headers: YAML,
    });
    assert.equal(res.status, 201, res.text);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.json.metadata.name, 'created');
    assert.deepEqual(res.json.metadata.labels, { from: 'yaml' });
    assert.deepEqual(res.json.data, { a: '1', b: 'two' });
    const stored = await t.fetch('GET', `${configMaps}/created`);
    assert.deepEqual(stored.json.data, { a: '1', b: 'two' });
  });

  it('PUT updates from YAML, with its resourceVersion precondition', async () => {
    const created = await t.fetch('POST', configMaps, {
      body: { metadata: { name: 'updated' }, data: { a: '1' } },
    });
    assert.equal(created.status, 201, created.text);
    const object = { ...created.json, data: { a: '2' } };
    const res = await t.fetch('PUT', `${configMaps}/updated`, { rawBody: stringify(object), headers: YAML });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json.data, { a: '2' });
    // The same stale body again: the precondition holds for YAML as for JSON.
    const stale = await t.fetch('PUT', `${configMaps}/updated`, {
      rawBody: stringify(object),
      headers: YAML,
    });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.json.reason, 'Conflict');
  });

  it('DELETE takes DeleteOptions in YAML', async () => {
    const created = await t.fetch('POST', configMaps, { body: { metadata: { name: 'deleted' } } });
    assert.equal(created.status, 201, created.text);
    const wrongUid = await t.fetch('DELETE', `${configMaps}/deleted`, {
      rawBody: 'apiVersion: v1\nkind: DeleteOptions\npreconditions:\n  uid: not-the-uid\n',
      headers: YAML,
    });
    assert.equal(wrongUid.status, 409, wrongUid.text);
    const res = await t.fetch('DELETE', `${configMaps}/deleted`, {
      rawBody: `apiVersion: v1\nkind: DeleteOptions\npreconditions:\n  uid: ${created.json.metadata.uid}\n`,
      headers: YAML,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await t.fetch('GET', `${configMaps}/deleted`)).status, 404);
  });

  it('field validation applies to YAML as to JSON: Strict refuses an unknown field', async () => {
    const res = await t.fetch('POST', `${configMaps}?fieldValidation=Strict`, {
      rawBody: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\nbogus: 1\n',
      headers: YAML,
    });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.message, /strict decoding error: unknown field "bogus"/);
    assert.equal((await t.fetch('GET', `${configMaps}/strict`)).status, 404);
  });

  for (const [name, body, message] of [
    ['malformed YAML', 'metadata: {name: [', /^error converting YAML to JSON: /],
    ['a repeated key', 'kind: ConfigMap\nmetadata:\n  name: a\n  name: b\n', /Map keys must be unique/],
    ['an empty body', '', /^the request body is empty$/],
    ['only a comment', '# nothing\n', /^the request body is empty$/],
    ['a list', '- a\n- b\n', /^the request body must be a YAML or JSON object$/],
    ['a scalar', 'just text', /^the request body must be a YAML or JSON object$/],
  ] as const) {
    it(`${name}: 400 BadRequest, nothing created`, async () => {
      const before = (await t.fetch('GET', configMaps)).json.items.length;
      const res = await t.fetch('POST', configMaps, { rawBody: body, headers: YAML });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.kind, 'Status');
      assert.equal(res.json.reason, 'BadRequest');
      assert.match(res.json.message, message);
      assert.equal((await t.fetch('GET', configMaps)).json.items.length, before);
    });
  }

  it('nesting past the JSON limit is refused as in JSON, in flow style and in block style', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const flow = await t.fetch('POST', configMaps, {
      rawBody: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: ${deep(MAX_JSON_DEPTH + 1)}\n`,
      headers: YAML,
    });
    assert.equal(flow.status, 400, flow.text.slice(0, 300));
    assert.match(flow.json.message, /exceeded max depth/);
    // Block style nests by indentation, which no bracket count sees (one space a level keeps it under 3 MiB).
    const levels = MAX_JSON_DEPTH + 100;
    let block = 'x:\n';
    for (let i = 1; i <= levels; i++) block += `${' '.repeat(i)}a:\n`;
    const indented = await t.fetch('POST', configMaps, {
      rawBody: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n${block}${' '.repeat(levels + 1)}b: 1\n`,
      headers: YAML,
    });
    assert.equal(indented.status, 400, indented.text.slice(0, 300));
    assert.match(indented.json.message, /exceeded max depth/);
    assert.equal((await t.fetch('GET', `${configMaps}/deep`)).status, 404);
  });

  it('a body over the size limit is 413 as in JSON', async () => {
    const res = await t.fetch('POST', configMaps, {
      rawBody: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  x: ${'a'.repeat(3 * 1024 * 1024 + 1)}\n`,
      headers: YAML,
    });
    assert.equal(res.status, 413, res.text.slice(0, 300));
    assert.equal(res.json.reason, 'RequestEntityTooLarge');
  });
});
