import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { openWatch } from '@certkit/testenv/apiserver/watch-client';
import { eventually } from '@certkit/testenv/eventually';

/**
 * Boolean query parameters with raw requests, read as kube-apiserver reads them: "0" and "false" in any case
 * are false, any other value is true (the Python client sends `True`). Every parameter goes through one
 * reading, so the handlers and the request metrics agree.
 */

let t: TestServer;
const NS = 'query-bool';
const configMaps = `/api/v1/namespaces/${NS}/configmaps`;

before(async () => {
  t = await startTestServer();
  assert.equal(
    (await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status,
    201,
  );
  const seed = await t.fetch('POST', configMaps, { body: { metadata: { name: 'seed' }, data: { a: '1' } } });
  assert.equal(seed.status, 201, seed.text);
});
after(async () => {
  await t.close();
});

describe('watch', () => {
  // `watch` bare and `watch=bogus` are watches too: kube-apiserver refuses no value of a bool parameter.
  for (const value of ['True', 'true', 'TRUE', '1', 't', 'T', 'yes', 'bogus', '']) {
    it(`?watch=${value} opens a watch stream that starts with the existing objects`, async () => {
      const stream = await openWatch(t, `${configMaps}?watch=${value}&resourceVersion=0`);
      try {
        assert.equal(stream.status, 200);
        const [first] = await stream.waitFor(1);
        assert.equal(first.type, 'ADDED');
        assert.equal(first.object.metadata.name, 'seed');
      } finally {
        stream.close();
      }
    });
  }

  it('a bare ?watch (no "=") is a watch', async () => {
    const stream = await openWatch(t, `${configMaps}?watch&resourceVersion=0`);
    try {
      const [first] = await stream.waitFor(1);
      assert.equal(first.type, 'ADDED');
    } finally {
      stream.close();
    }
  });

  for (const value of ['False', 'false', 'FALSE', 'fAlSe', '0']) {
    it(`?watch=${value} lists`, async () => {
      const res = await t.fetch('GET', `${configMaps}?watch=${value}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.kind, 'ConfigMapList');
      assert.deepEqual(
        res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
        ['seed'],
      );
    });
  }

  it('?watch=True with timeoutSeconds streams the events after resourceVersion, then ends', async () => {
    const list = await t.fetch('GET', configMaps);
    const rv = list.json.metadata.resourceVersion;
    const watching = t.fetch('GET', `${configMaps}?watch=True&resourceVersion=${rv}&timeoutSeconds=2`);
    await sleep(200);
    const created = await t.fetch('POST', configMaps, { body: { metadata: { name: 'after-rv' } } });
    assert.equal(created.status, 201, created.text);
    const res = await watching;
    assert.equal(res.status, 200);
    const events = res.text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name]),
      [['ADDED', 'after-rv']],
    );
  });

  it('counts ?watch=True as verb="watch" in apiserver_request_total, as the handler served it', async () => {
    const res = await t.fetch('GET', `/api/v1/namespaces/${NS}/secrets?watch=True&timeoutSeconds=1`);
    assert.equal(res.status, 200);
    const metrics = await t.fetch('GET', '/metrics');
    assert.match(metrics.text, /apiserver_request_total\{verb="watch",resource="secrets",code="200"\} 1\n/);
    assert.doesNotMatch(metrics.text, /apiserver_request_total\{verb="list",resource="secrets"/);
  });
});

describe('allowWatchBookmarks and sendInitialEvents', () => {
  it('sendInitialEvents=True&allowWatchBookmarks=True sends the initial objects, then the initial-events-end bookmark', async () => {
    const stream = await openWatch(
      t,
      `${configMaps}?watch=True&sendInitialEvents=True&allowWatchBookmarks=True&resourceVersionMatch=NotOlderThan`,
    );
    try {
      assert.equal(stream.status, 200);
      await eventually(
        async () => stream.events.some((e) => e.type === 'BOOKMARK'),
        'the initial-events-end bookmark',
      );
      const bookmark = stream.events.find((e) => e.type === 'BOOKMARK');
      assert.equal(bookmark.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
      assert.ok(stream.events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'seed'));
    } finally {
      stream.close();
    }
  });

  it('sendInitialEvents=False on a list is still "provided" and refused, as upstream', async () => {
    const res = await t.fetch('GET', `${configMaps}?sendInitialEvents=False`);
    assert.equal(res.status, 422, res.text);
    assert.match(res.json.message, /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list/);
  });
});

describe('force (server-side apply)', () => {
  const path = `${configMaps}/applied`;
  const apply = (manager: string, value: string, query = '') =>
    t.fetch('PATCH', `${path}?fieldManager=${manager}${query}`, {
      rawBody: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { key: value } }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });

  before(async () => {
    const first = await apply('first', 'one');
    assert.ok(first.status === 200 || first.status === 201, first.text);
  });

  for (const value of ['False', 'false', '0']) {
    it(`force=${value} leaves the conflict with the other manager a 409`, async () => {
      const res = await apply('second', 'two', `&force=${value}`);
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json.reason, 'Conflict');
      assert.match(res.json.message, /conflict with "first"/);
    });
  }

  it('force=True takes the field over', async () => {
    const res = await apply('second', 'two', '&force=True');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.key, 'two');
    const managers = res.json.metadata.managedFields.map((m: { manager: string }) => m.manager);
    assert.ok(managers.includes('second'), JSON.stringify(managers));
  });

  it('force=1 takes it back for another manager', async () => {
    const res = await apply('third', 'three', '&force=1');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.key, 'three');
  });

  it('force=True on a merge patch is forbidden, as for any non-apply patch', async () => {
    const res = await t.fetch('PATCH', `${path}?force=True`, {
      body: { data: { other: 'x' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(res.status, 422, res.text);
    assert.match(res.json.message, /force: Forbidden: may not be specified for non-apply patch/);
  });
});

describe('orphanDependents', () => {
  let n = 0;
  /** A ConfigMap owner and a Secret that it owns; returns their paths. */
  async function ownerAndDependent() {
    const suffix = String(++n);
    const owner = await t.fetch('POST', configMaps, { body: { metadata: { name: `owner-${suffix}` } } });
    assert.equal(owner.status, 201, owner.text);
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: owner.json.metadata.name,
      uid: owner.json.metadata.uid,
    };
    const dep = await t.fetch('POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { metadata: { name: `dependent-${suffix}`, ownerReferences: [ref] }, stringData: { a: 'b' } },
    });
    assert.equal(dep.status, 201, dep.text);
    return {
      ownerPath: `${configMaps}/owner-${suffix}`,
      depPath: `/api/v1/namespaces/${NS}/secrets/dependent-${suffix}`,
    };
  }

  for (const value of ['True', 'true', '1']) {
    it(`orphanDependents=${value} keeps the dependent and removes its ownerReference`, async () => {
      const { ownerPath, depPath } = await ownerAndDependent();
      const res = await t.fetch('DELETE', `${ownerPath}?orphanDependents=${value}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.metadata.finalizers, ['orphan']);
      await eventually(
        async () => (await t.fetch('GET', ownerPath)).status === 404,
        'the owner to be deleted',
      );
      const dep = await t.fetch('GET', depPath);
      assert.equal(dep.status, 200, dep.text);
      assert.equal(dep.json.metadata.ownerReferences, undefined);
    });
  }

  it('orphanDependents=False deletes the dependent in the background', async () => {
    const { ownerPath, depPath } = await ownerAndDependent();
    const res = await t.fetch('DELETE', `${ownerPath}?orphanDependents=False`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.metadata.finalizers, undefined);
    await eventually(
      async () => (await t.fetch('GET', depPath)).status === 404,
      'the dependent to be collected',
    );
  });

  it('orphanDependents=True with a propagationPolicy is refused: only one of them may be set', async () => {
    const { ownerPath } = await ownerAndDependent();
    const res = await t.fetch('DELETE', `${ownerPath}?orphanDependents=True&propagationPolicy=Background`);
    assert.ok(res.status === 400 || res.status === 422, res.text);
    assert.match(res.json.message, /propagationPolicy/);
    assert.equal((await t.fetch('GET', ownerPath)).status, 200);
  });
});
