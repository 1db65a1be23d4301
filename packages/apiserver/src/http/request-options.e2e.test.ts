import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, type TestResponse, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';

/**
 * The options of each verb, with raw requests, answered with the Status kube-apiserver gives for the same
 * bad value (apimachinery/pkg/apis/meta/v1/validation and the handlers in apiserver/pkg/endpoints/handlers):
 * a 422 Invalid on `<Verb>Options.meta.k8s.io ""` with one cause per field, or the 400 of the query decoding.
 */

let t: TestServer;
const NS = 'request-options';
const configMaps = `/api/v1/namespaces/${NS}/configmaps`;
let counter = 0;
const freshName = () => `cm-${++counter}`;

before(async () => {
  t = await startTestServer();
  const ns = await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
});
after(async () => {
  await t.close();
});

async function createConfigMap(name = freshName()): Promise<string> {
  const res = await t.fetch('POST', configMaps, { body: { metadata: { name }, data: { a: '1' } } });
  assert.equal(res.status, 201, res.text);
  return name;
}

async function exists(name: string): Promise<boolean> {
  const res = await t.fetch('GET', `${configMaps}/${name}`);
  return res.status === 200;
}

interface Cause {
  reason: string;
  message: string;
  field: string;
}

/** A 422 Invalid Status on kind `<kind>.meta.k8s.io` with exactly these causes, and the message kube writes. */
function assertInvalid(res: TestResponse, kind: string, causes: Cause[]): void {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.json.kind, 'Status');
  assert.equal(res.json.status, 'Failure');
  assert.equal(res.json.reason, 'Invalid');
  assert.equal(res.json.code, 422);
  assert.deepEqual(res.json.details, { name: '', group: 'meta.k8s.io', kind, causes });
  const list = causes.map((c) => `${c.field}: ${c.message}`);
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  assert.equal(res.json.message, `${kind}.meta.k8s.io "" is invalid: ${summary}`);
}

function assertBadRequest(res: TestResponse, message: string): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.kind, 'Status');
  assert.equal(res.json.reason, 'BadRequest');
  assert.equal(res.json.code, 400);
  assert.equal(res.json.message, message);
}

const dryRunCause = (values: string): Cause => ({
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: []string{${values}}: supported values: "All"`,
  field: 'dryRun',
});

const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

describe('dryRun', () => {
  it('POST ?dryRun=Foo: 422 on CreateOptions, nothing created', async () => {
    const name = freshName();
    const res = await t.fetch('POST', `${configMaps}?dryRun=Foo`, { body: { metadata: { name } } });
    assertInvalid(res, 'CreateOptions', [dryRunCause('"Foo"')]);
    assert.equal(await exists(name), false);
  });

  it('PUT ?dryRun=All&dryRun=Foo: 422 on UpdateOptions naming every value', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('PUT', `${configMaps}/${name}?dryRun=All&dryRun=Foo`, {
      body: { metadata: { name }, data: { a: '2' } },
    });
    assertInvalid(res, 'UpdateOptions', [dryRunCause('"All", "Foo"')]);
  });

  it('PATCH ?dryRun= (empty): 422 on PatchOptions', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('PATCH', `${configMaps}/${name}?dryRun=`, {
      headers: MERGE,
      rawBody: '{"data":{"a":"2"}}',
    });
    assertInvalid(res, 'PatchOptions', [dryRunCause('""')]);
  });

  it('DELETE ?dryRun=Foo: 422 on DeleteOptions, the object stays', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}?dryRun=Foo`);
    assertInvalid(res, 'DeleteOptions', [dryRunCause('"Foo"')]);
    assert.equal(await exists(name), true);
  });

  it('DELETE with a DeleteOptions body {"dryRun":["Foo"]}: 422 on DeleteOptions', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}`, { body: { dryRun: ['Foo'] } });
    assertInvalid(res, 'DeleteOptions', [dryRunCause('"Foo"')]);
    assert.equal(await exists(name), true);
  });

  it('DELETE with a body {"dryRun":["All"]} is a dry run: the object stays', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}`, { body: { dryRun: ['All'] } });
    assert.equal(res.status, 200, res.text);
    assert.equal(await exists(name), true);
  });

  it('deletecollection ?dryRun=Foo: 422 on DeleteOptions, nothing deleted', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}?dryRun=Foo`);
    assertInvalid(res, 'DeleteOptions', [dryRunCause('"Foo"')]);
    assert.equal(await exists(name), true);
  });
});

describe('DeleteOptions', () => {
  const bothSet = (policy: string): Cause => ({
    reason: 'FieldValueInvalid',
    message: `Invalid value: "${policy}": orphanDependents and deletionPropagation cannot be both set`,
    field: 'propagationPolicy',
  });
  const unsupported = (policy: string): Cause => ({
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`,
    field: 'propagationPolicy',
  });

  it('?orphanDependents=true&propagationPolicy=Background: 422, the object stays', async () => {
    const name = await createConfigMap();
    const res = await t.fetch(
      'DELETE',
      `${configMaps}/${name}?orphanDependents=true&propagationPolicy=Background`,
    );
    assertInvalid(res, 'DeleteOptions', [bothSet('Background')]);
    assert.equal(await exists(name), true);
  });

  it('a body with both orphanDependents and propagationPolicy: 422', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}`, {
      body: {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        orphanDependents: false,
        propagationPolicy: 'Foreground',
      },
    });
    assertInvalid(res, 'DeleteOptions', [bothSet('Foreground')]);
    assert.equal(await exists(name), true);
  });

  it('?propagationPolicy=Bogus: 422 naming the supported values', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}?propagationPolicy=Bogus`);
    assertInvalid(res, 'DeleteOptions', [unsupported('Bogus')]);
  });

  it('?propagationPolicy= (empty) is the unsupported value ""', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}?propagationPolicy=`);
    assertInvalid(res, 'DeleteOptions', [unsupported('')]);
  });

  it('every problem of one request in one Status, in upstream order', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}`, {
      body: { orphanDependents: true, propagationPolicy: 'Bogus', dryRun: ['x'] },
    });
    assertInvalid(res, 'DeleteOptions', [bothSet('Bogus'), unsupported('Bogus'), dryRunCause('"x"')]);
  });

  it('with a body, the query is not read (as kube-apiserver): a bad query value is ignored', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}/${name}?propagationPolicy=Bogus&dryRun=Foo`, {
      body: { propagationPolicy: 'Background' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(await exists(name), false);
  });

  for (const [body, message] of [
    [
      { orphanDependents: 'yes' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool',
    ],
    [
      { dryRun: 'All' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string',
    ],
    [
      { propagationPolicy: 5 },
      'json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation',
    ],
    [
      { preconditions: { uid: [] } },
      'json: cannot unmarshal array into Go struct field Preconditions.preconditions.uid of type types.UID',
    ],
  ] as const) {
    it(`a wrongly typed body ${JSON.stringify(body)}: 400, the object stays`, async () => {
      const name = await createConfigMap();
      const res = await t.fetch('DELETE', `${configMaps}/${name}`, { body });
      assertBadRequest(res, message);
      assert.equal(await exists(name), true);
    });
  }

  for (const [value, why] of [
    ['x', 'invalid syntax'],
    ['1.5', 'invalid syntax'],
    ['', 'invalid syntax'],
    ['99999999999999999999', 'value out of range'],
  ] as const) {
    it(`?gracePeriodSeconds=${value}: 400 as strconv.ParseInt words it, the object stays`, async () => {
      const name = await createConfigMap();
      const res = await t.fetch('DELETE', `${configMaps}/${name}?gracePeriodSeconds=${value}`);
      assertBadRequest(res, `strconv.ParseInt: parsing "${value}": ${why}`);
      assert.equal(await exists(name), true);
    });
  }

  it('?gracePeriodSeconds=0 and =-1 are well-formed: the object is deleted', async () => {
    for (const value of ['0', '-1']) {
      const name = await createConfigMap();
      const res = await t.fetch('DELETE', `${configMaps}/${name}?gracePeriodSeconds=${value}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(await exists(name), false);
    }
  });

  it('deletecollection ?gracePeriodSeconds=x: 400, nothing deleted', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('DELETE', `${configMaps}?gracePeriodSeconds=x`);
    assertBadRequest(res, 'strconv.ParseInt: parsing "x": invalid syntax');
    assert.equal(await exists(name), true);
  });

  it('deletecollection: a bad ListOptions is refused before the DeleteOptions', async () => {
    const res = await t.fetch('DELETE', `${configMaps}?limit=x&propagationPolicy=Bogus`);
    assertBadRequest(res, 'strconv.ParseInt: parsing "x": invalid syntax');
  });
});

describe('server-side apply that creates', () => {
  const config = (name: string, value: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "${value}"\n`;

  it('answers 201 Created when the object did not exist, 200 when it did', async () => {
    const name = freshName();
    const created = await t.fetch('PATCH', `${configMaps}/${name}?fieldManager=test`, {
      headers: APPLY,
      rawBody: config(name, '1'),
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.name, name);
    assert.equal(created.json.data.a, '1');

    const updated = await t.fetch('PATCH', `${configMaps}/${name}?fieldManager=test`, {
      headers: APPLY,
      rawBody: config(name, '2'),
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.json.data.a, '2');
  });

  it('a dry-run apply that would create answers 201 and stores nothing', async () => {
    const name = freshName();
    const res = await t.fetch('PATCH', `${configMaps}/${name}?fieldManager=test&dryRun=All`, {
      headers: APPLY,
      rawBody: config(name, '1'),
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(await exists(name), false);
  });

  it('apply without a fieldManager and with a bad dryRun: both causes in one 422', async () => {
    const name = freshName();
    const res = await t.fetch('PATCH', `${configMaps}/${name}?dryRun=Foo`, {
      headers: APPLY,
      rawBody: config(name, '1'),
    });
    assertInvalid(res, 'PatchOptions', [
      {
        reason: 'FieldValueRequired',
        message: 'Required value: is required for apply patch',
        field: 'fieldManager',
      },
      dryRunCause('"Foo"'),
    ]);
  });

  it('force on a merge patch: 422 Forbidden', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('PATCH', `${configMaps}/${name}?force=true`, { headers: MERGE, rawBody: '{}' });
    assertInvalid(res, 'PatchOptions', [
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: may not be specified for non-apply patch',
        field: 'force',
      },
    ]);
  });
});

describe('fieldManager', () => {
  const tooLong: Cause = {
    reason: 'FieldValueTooLong',
    message: 'Too long: may not be more than 128 bytes',
    field: 'fieldManager',
  };

  it('128 bytes are accepted and recorded as the manager', async () => {
    const manager = 'm'.repeat(128);
    const name = freshName();
    const res = await t.fetch('PATCH', `${configMaps}/${name}?fieldManager=${manager}`, {
      headers: APPLY,
      rawBody: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`,
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.metadata.managedFields[0].manager, manager);
  });

  it('POST with 129 bytes: 422 Too long on CreateOptions', async () => {
    const name = freshName();
    const res = await t.fetch('POST', `${configMaps}?fieldManager=${'m'.repeat(129)}`, {
      body: { metadata: { name } },
    });
    assertInvalid(res, 'CreateOptions', [tooLong]);
    assert.equal(await exists(name), false);
  });

  it('counts bytes, not characters: 65 × "é" (130 bytes) is too long on UpdateOptions', async () => {
    const name = await createConfigMap();
    const res = await t.fetch(
      'PUT',
      `${configMaps}/${name}?fieldManager=${encodeURIComponent('é'.repeat(65))}`,
      {
        body: { metadata: { name } },
      },
    );
    assertInvalid(res, 'UpdateOptions', [tooLong]);
  });

  it('a non-printable character: 422 Invalid naming it and its byte position, value quoted as Go does', async () => {
    const name = await createConfigMap();
    const res = await t.fetch(
      'PATCH',
      `${configMaps}/${name}?fieldManager=${encodeURIComponent('é\u0001x\t')}`,
      {
        headers: MERGE,
        rawBody: '{}',
      },
    );
    const invalid = (detail: string): Cause => ({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "é\\x01x\\t": ${detail}`,
      field: 'fieldManager',
    });
    assertInvalid(res, 'PatchOptions', [
      invalid('invalid character U+0001 (at position 2)'),
      invalid('invalid character U+0009 (at position 4)'),
    ]);
  });

  it('an empty fieldManager is unset: the manager comes from the User-Agent', async () => {
    const name = freshName();
    const applied = await t.fetch('PATCH', `${configMaps}/${name}?fieldManager=owner`, {
      headers: APPLY,
      rawBody: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`,
    });
    assert.equal(applied.status, 201, applied.text);
    const res = await t.fetch('PATCH', `${configMaps}/${name}?fieldManager=`, {
      headers: { ...MERGE, 'User-Agent': 'agent-manager/1.0 (linux)' },
      rawBody: '{"data":{"b":"2"}}',
    });
    assert.equal(res.status, 200, res.text);
    const managers = res.json.metadata.managedFields.map((f: { manager: string }) => f.manager);
    assert.deepEqual(managers.sort(), ['agent-manager', 'owner']);
  });
});

describe('fieldValidation', () => {
  const unsupported = (value: string): Cause => ({
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: "${value}": supported values: "", "Ignore", "Strict", "Warn"`,
    field: 'fieldValidation',
  });

  it('POST ?fieldValidation=Bogus: 422 on CreateOptions', async () => {
    const name = freshName();
    const res = await t.fetch('POST', `${configMaps}?fieldValidation=Bogus`, {
      body: { metadata: { name } },
    });
    assertInvalid(res, 'CreateOptions', [unsupported('Bogus')]);
    assert.equal(await exists(name), false);
  });

  it('the values are case-sensitive: ?fieldValidation=strict is refused', async () => {
    const name = await createConfigMap();
    const res = await t.fetch('PATCH', `${configMaps}/${name}?fieldValidation=strict`, {
      headers: MERGE,
      rawBody: '{}',
    });
    assertInvalid(res, 'PatchOptions', [unsupported('strict')]);
  });

  it('every problem of a PUT in one Status: fieldManager, dryRun, then fieldValidation', async () => {
    const name = await createConfigMap();
    const res = await t.fetch(
      'PUT',
      `${configMaps}/${name}?fieldValidation=x&dryRun=y&fieldManager=${'m'.repeat(200)}`,
      {
        body: { metadata: { name } },
      },
    );
    assertInvalid(res, 'UpdateOptions', [
      {
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 128 bytes',
        field: 'fieldManager',
      },
      dryRunCause('"y"'),
      unsupported('x'),
    ]);
  });

  it('the options are checked before the body is decoded', async () => {
    const res = await t.fetch('POST', `${configMaps}?fieldValidation=Bogus`, { rawBody: '{not json' });
    assertInvalid(res, 'CreateOptions', [unsupported('Bogus')]);
  });

  it('an empty fieldValidation is the default, Warn: an unknown field is a warning', async () => {
    const name = freshName();
    const res = await t.fetch('POST', `${configMaps}?fieldValidation=`, {
      body: { metadata: { name }, bogus: 1 },
    });
    assert.equal(res.status, 201, res.text);
    assert.match(String(res.headers.warning), /unknown field \\"bogus\\"/);
  });
});

describe('list and watch parameters', () => {
  before(async () => {
    for (let i = 0; i < 3; i++) await createConfigMap(`listed-${i}`);
  });

  for (const [param, value, problem] of [
    ['limit', 'abc', 'invalid syntax'],
    ['limit', '1.5', 'invalid syntax'],
    ['limit', '9223372036854775808', 'value out of range'],
    ['timeoutSeconds', 'abc', 'invalid syntax'],
  ] as const) {
    it(`list ?${param}=${value}: 400 as strconv.ParseInt words it`, async () => {
      const res = await t.fetch('GET', `${configMaps}?${param}=${value}`);
      assertBadRequest(res, `strconv.ParseInt: parsing "${value}": ${problem}`);
    });
  }

  it('watch ?timeoutSeconds=abc: 400 before the stream starts', async () => {
    const res = await t.fetch('GET', `${configMaps}?watch=true&timeoutSeconds=abc`);
    assertBadRequest(res, 'strconv.ParseInt: parsing "abc": invalid syntax');
  });

  it('list ?limit=-1 is no limit: every object, no continue', async () => {
    const all = await t.fetch('GET', configMaps);
    const res = await t.fetch('GET', `${configMaps}?limit=-1`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.items.length >= 3);
    assert.equal(res.json.items.length, all.json.items.length);
    assert.equal(res.json.metadata.continue, undefined);
  });

  it('watch ?timeoutSeconds=0 is the default timeout, not an immediate end', async () => {
    const name = freshName();
    const stream = await openWatch(
      t,
      `${configMaps}?watch=true&resourceVersion=0&timeoutSeconds=0&fieldSelector=metadata.name%3D${name}`,
    );
    try {
      assert.equal(stream.status, 200);
      let ended = false;
      void stream.ended.then(() => (ended = true));
      await sleep(300);
      assert.equal(ended, false, 'the watch ended at once');
      await createConfigMap(name);
      const [event] = await stream.waitFor(1);
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.metadata.name, name);
    } finally {
      stream.close();
    }
  });

  it('watch ?timeoutSeconds=-1 ends at once, cleanly', async () => {
    const stream = await openWatch(t, `${configMaps}?watch=true&resourceVersion=0&timeoutSeconds=-1`);
    assert.equal(stream.status, 200);
    await stream.ended;
    assert.ok(stream.events.every((e) => e.type !== 'ERROR'));
  });

  it('watch ?timeoutSeconds=-5 prints no TimeoutNegativeWarning (the server runs in this process)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const stream = await openWatch(t, `${configMaps}?watch=true&resourceVersion=0&timeoutSeconds=-5`);
      assert.equal(stream.status, 200);
      await stream.ended;
      // Node emits process warnings on a later tick.
      await sleep(50);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('TimeoutNegativeWarning')),
      [],
    );
  });

  it('watch ?sendInitialEvents=true without resourceVersionMatch: 422 before the stream starts', async () => {
    const res = await t.fetch(
      'GET',
      `${configMaps}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`,
    );
    assertInvalid(res, 'ListOptions', [
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        field: 'resourceVersionMatch',
      },
    ]);
  });

  it('watch ?sendInitialEvents=false&resourceVersionMatch=Exact: both causes, in upstream order', async () => {
    const res = await t.fetch(
      'GET',
      `${configMaps}?watch=true&sendInitialEvents=false&resourceVersionMatch=Exact&resourceVersion=1`,
    );
    assertInvalid(res, 'ListOptions', [
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        field: 'resourceVersionMatch',
      },
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Exact": supported values: "NotOlderThan"',
        field: 'resourceVersionMatch',
      },
    ]);
  });

  it('watch ?resourceVersionMatch=NotOlderThan without sendInitialEvents: 422', async () => {
    const res = await t.fetch(
      'GET',
      `${configMaps}?watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1`,
    );
    assertInvalid(res, 'ListOptions', [
      {
        reason: 'FieldValueForbidden',
        message:
          'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        field: 'resourceVersionMatch',
      },
    ]);
  });

  it('list ?sendInitialEvents=true&allowWatchBookmarks=true: 422, sendInitialEvents is forbidden for list', async () => {
    const res = await t.fetch('GET', `${configMaps}?sendInitialEvents=true&allowWatchBookmarks=true`);
    assertInvalid(res, 'ListOptions', [
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: sendInitialEvents is forbidden for list',
        field: 'sendInitialEvents',
      },
    ]);
  });

  const invalidRv = (rv: string) =>
    `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`;

  /** The watch cache's storage.InvalidError, which kube-apiserver answers as a 422 without details. */
  function assertCacheInvalid(res: TestResponse, rv: string): void {
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.reason, 'Invalid');
    assert.equal(res.json.message, invalidRv(rv));
    assert.equal(res.json.details, undefined);
  }

  it('list ?resourceVersion=abc (watch cache): 422', async () => {
    assertCacheInvalid(await t.fetch('GET', `${configMaps}?resourceVersion=abc`), 'abc');
  });

  it('watch ?resourceVersion=abc: 422 before the stream starts', async () => {
    assertCacheInvalid(await t.fetch('GET', `${configMaps}?watch=true&resourceVersion=abc`), 'abc');
  });

  it('get ?resourceVersion=abc: 422', async () => {
    assertCacheInvalid(await t.fetch('GET', `${configMaps}/listed-0?resourceVersion=abc`), 'abc');
  });

  it('list ?resourceVersion=abc&limit=2 (served by etcd): 400 invalid resource version', async () => {
    const res = await t.fetch('GET', `${configMaps}?resourceVersion=abc&limit=2`);
    assertBadRequest(res, `invalid resource version: ${invalidRv('abc')}`);
  });
});
