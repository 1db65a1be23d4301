import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type PythonClient, pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Conformance with the official Python client (`kubernetes` 22.x as Debian ships it), a client nobody here
 * wrote: each case is a small Python script run by /usr/bin/python3 against the real server over HTTPS with
 * the kubeconfig the server writes. The client sends booleans as Python prints them (`watch=True`,
 * `orphanDependents=True`, `force=True`), strategic merge patches for dicts and JSON patches for lists.
 * Skipped, with the reason printed, when python3 or its `kubernetes` module is missing.
 */

const skip = pythonClientSkip;
if (skip) console.log(`# skipping the Python client conformance suite: ${skip}`);

const CRDS_YAML = join(import.meta.dirname, '../../../../deploy/crds.yaml');

let t: TestServer;
let py: PythonClient;

async function namespace(name: string): Promise<string> {
  const res = await t.fetch('POST', '/api/v1/namespaces', { body: { metadata: { name } } });
  assert.equal(res.status, 201, res.text);
  return name;
}

describe('python3-kubernetes', { skip }, () => {
  before(async () => {
    t = await startTestServer();
    py = pythonClientFor(t.kubeconfigPath);
  });
  after(async () => {
    await t?.close();
  });

  it('reports the server version through VersionApi', async () => {
    const out = await py.run(`emit(to_dict(client.VersionApi().get_code()))`);
    assert.equal(typeof out.gitVersion, 'string');
    assert.match(out.gitVersion, /^v1\.\d+/);
  });

  describe('list', () => {
    let ns: string;
    before(async () => {
      ns = await namespace('py-list');
      await py.run(
        `
for i in range(7):
    tier = ['a', 'b', 'c'][i % 3]
    core.create_namespaced_config_map(ARGS, {
        'metadata': {'name': 'cm-%d' % i, 'labels': {'app': 'web' if i < 5 else 'db', 'tier': tier}},
        'data': {'i': str(i)},
    })
emit(None)
`,
        ns,
      );
    });

    it('selects by label: equality, inequality, set-based and existence', async () => {
      const out = await py.run(
        `
def names(selector):
    return sorted(i.metadata.name for i in core.list_namespaced_config_map(ARGS, label_selector=selector).items)
emit({s: names(s) for s in ['app=web', 'app!=web', 'tier in (a,c),app=web', '!tier', 'tier']})
`,
        ns,
      );
      assert.deepEqual(out['app=web'], ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4']);
      assert.deepEqual(out['app!=web'], ['cm-5', 'cm-6']);
      assert.deepEqual(out['tier in (a,c),app=web'], ['cm-0', 'cm-2', 'cm-3']);
      assert.deepEqual(out['!tier'], []);
      assert.equal(out.tier.length, 7);
    });

    it('pages with limit and _continue until the continue token is empty', async () => {
      const out = await py.run(
        `
pages, token = [], None
while True:
    kwargs = {'limit': 3}
    if token:
        kwargs['_continue'] = token
    page = core.list_namespaced_config_map(ARGS, **kwargs)
    pages.append({
        'names': [i.metadata.name for i in page.items],
        'continue': page.metadata._continue,
        'remaining': page.metadata.remaining_item_count,
        'resourceVersion': page.metadata.resource_version,
    })
    token = page.metadata._continue
    if not token or len(pages) > 5:
        break
emit(pages)
`,
        ns,
      );
      assert.deepEqual(
        out.map((p: { names: string[] }) => p.names),
        [['cm-0', 'cm-1', 'cm-2'], ['cm-3', 'cm-4', 'cm-5'], ['cm-6']],
      );
      assert.ok(out[0].continue, 'the first page carries a continue token');
      assert.equal(out[0].remaining, 4);
      assert.equal(out[2].continue, null);
      // Every page is read at the first page's revision.
      assert.ok(out.every((p: { resourceVersion: string }) => p.resourceVersion === out[0].resourceVersion));
    });

    it('lists across namespaces with a label selector', async () => {
      const out = await py.run(
        `emit(sorted('%s/%s' % (i.metadata.namespace, i.metadata.name) for i in core.list_config_map_for_all_namespaces(label_selector='app=db').items))`,
      );
      assert.deepEqual(out, ['py-list/cm-5', 'py-list/cm-6']);
    });
  });

  describe('watch', () => {
    let ns: string;
    before(async () => {
      ns = await namespace('py-watch');
    });

    it('streams from resource_version, including events that arrive live, and ends at timeout_seconds', async () => {
      const out = await py.run(
        `
ns = ARGS
rv = core.list_namespaced_config_map(ns).metadata.resource_version
core.create_namespaced_config_map(ns, {'metadata': {'name': 'before-watch'}, 'data': {'v': '1'}})
core.patch_namespaced_config_map('before-watch', ns, {'data': {'v': '2'}})

def later():
    time.sleep(0.7)
    other = client.CoreV1Api(client.ApiClient())
    other.create_namespaced_config_map(ns, {'metadata': {'name': 'live'}})
    other.delete_namespaced_config_map('before-watch', ns)
threading.Thread(target=later).start()

events = []
started = time.monotonic()
for e in watch.Watch().stream(core.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=3):
    events.append({'type': e['type'], 'name': e['object'].metadata.name, 'kind': type(e['object']).__name__,
                   'data': e['object'].data, 'rawKind': e['raw_object']['kind']})
emit({'events': events, 'seconds': time.monotonic() - started})
`,
        ns,
      );
      assert.deepEqual(
        out.events.map((e: { type: string; name: string }) => [e.type, e.name]),
        [
          ['ADDED', 'before-watch'],
          ['MODIFIED', 'before-watch'],
          ['ADDED', 'live'],
          ['DELETED', 'before-watch'],
        ],
      );
      assert.equal(out.events[1].data.v, '2');
      assert.ok(out.events.every((e: { kind: string }) => e.kind === 'V1ConfigMap'));
      assert.ok(out.events.every((e: { rawKind: string }) => e.rawKind === 'ConfigMap'));
      // The server ends the stream at timeoutSeconds: not before, and not much after.
      assert.ok(out.seconds >= 2.5 && out.seconds < 10, `the stream lasted ${out.seconds} s`);
    });

    it('Watch().stream without a timeout, stopped by the caller, tracks the resource version', async () => {
      const out = await py.run(
        `
ns = ARGS
def writer():
    time.sleep(0.5)
    other = client.CoreV1Api(client.ApiClient())
    for i in range(3):
        other.create_namespaced_secret(ns, {'metadata': {'name': 's-%d' % i}, 'string_data': {'k': 'v'}})
threading.Thread(target=writer).start()

w = watch.Watch()
seen = []
for e in w.stream(core.list_namespaced_secret, ns):
    seen.append([e['type'], e['object'].metadata.name, e['object'].metadata.resource_version])
    if e['object'].metadata.name == 's-2':
        w.stop()
emit({'seen': seen, 'resourceVersion': w.resource_version})
`,
        ns,
      );
      // No resource_version: the watch starts with the current objects (none here) as ADDED, then goes on.
      assert.deepEqual(
        out.seen.map((s: string[]) => s.slice(0, 2)),
        [
          ['ADDED', 's-0'],
          ['ADDED', 's-1'],
          ['ADDED', 's-2'],
        ],
      );
      assert.equal(out.resourceVersion, out.seen[2][2]);
    });

    it('watches one object by field selector and sees its deletion', async () => {
      const out = await py.run(
        `
ns = ARGS
core.create_namespaced_config_map(ns, {'metadata': {'name': 'single'}})
core.create_namespaced_config_map(ns, {'metadata': {'name': 'noise'}})
def later():
    time.sleep(0.5)
    other = client.CoreV1Api(client.ApiClient())
    other.patch_namespaced_config_map('noise', ns, {'data': {'x': 'y'}})
    other.delete_namespaced_config_map('single', ns)
threading.Thread(target=later).start()
w = watch.Watch()
seen = []
for e in w.stream(core.list_namespaced_config_map, ns, field_selector='metadata.name=single', timeout_seconds=10):
    seen.append([e['type'], e['object'].metadata.name])
    if e['type'] == 'DELETED':
        w.stop()
emit(seen)
`,
        ns,
      );
      assert.deepEqual(out, [
        ['ADDED', 'single'],
        ['DELETED', 'single'],
      ]);
    });
  });

  describe('watch from an expired resource_version', () => {
    // A server of its own with a short watch history, so that an old resourceVersion falls out of it.
    let small: TestServer;
    let smallPy: PythonClient;
    before(async () => {
      small = await startTestServer({ maxHistory: 20 });
      smallPy = pythonClientFor(small.kubeconfigPath);
    });
    after(async () => {
      await small?.close();
    });

    it('raises ApiException 410 Expired, and a relist then a watch from the list resumes', async () => {
      const out = await smallPy.run(`
core.create_namespace({'metadata': {'name': 'expiry'}})
first = core.create_namespaced_config_map('expiry', {'metadata': {'name': 'cm-0'}}).metadata.resource_version
for i in range(1, 40):
    core.create_namespaced_config_map('expiry', {'metadata': {'name': 'cm-%d' % i}})
results = {}
for label, kwargs in [('withTimeout', {'timeout_seconds': 5}), ('retried', {})]:
    try:
        for e in watch.Watch().stream(core.list_namespaced_config_map, 'expiry', resource_version=first, **kwargs):
            results[label] = 'unexpected event %s' % e['type']
            break
    except ApiException as e:
        results[label] = {'status': e.status, 'reason': e.reason}
listed = core.list_namespaced_config_map('expiry')
def later():
    time.sleep(0.5)
    client.CoreV1Api(client.ApiClient()).create_namespaced_config_map('expiry', {'metadata': {'name': 'fresh'}})
threading.Thread(target=later).start()
w = watch.Watch()
for e in w.stream(core.list_namespaced_config_map, 'expiry', resource_version=listed.metadata.resource_version, timeout_seconds=10):
    results['resumed'] = [e['type'], e['object'].metadata.name]
    w.stop()
results['listed'] = len(listed.items)
emit(results)
`);
      for (const label of ['withTimeout', 'retried']) {
        assert.equal(out[label].status, 410, JSON.stringify(out[label]));
        assert.match(out[label].reason, /^Expired: too old resource version/);
      }
      assert.equal(out.listed, 40);
      assert.deepEqual(out.resumed, ['ADDED', 'fresh']);
    });
  });

  describe('create, replace and patch', () => {
    let ns: string;
    before(async () => {
      ns = await namespace('py-write');
    });

    it('creates with model objects and replaces with the read resourceVersion; a stale one is a 409', async () => {
      const out = await py.run(
        `
ns = ARGS
body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name='settings', labels={'app': 'py'}), data={'a': '1'})
created = core.create_namespaced_config_map(ns, body)
stale = created.metadata.resource_version
created.data['a'] = '2'
replaced = core.replace_namespaced_config_map('settings', ns, created)
created.metadata.resource_version = stale
conflict = api_error(lambda: core.replace_namespaced_config_map('settings', ns, created))
duplicate = api_error(lambda: core.create_namespaced_config_map(ns, body))
emit({'created': to_dict(core.read_namespaced_config_map('settings', ns)), 'replaced': replaced.data,
      'changed': replaced.metadata.resource_version != stale, 'conflict': conflict, 'duplicate': duplicate})
`,
        ns,
      );
      assert.deepEqual(out.replaced, { a: '2' });
      assert.equal(out.changed, true);
      assert.equal(out.created.metadata.labels.app, 'py');
      assert.equal(out.conflict.status, 409);
      assert.equal(out.conflict.body.reason, 'Conflict');
      assert.equal(out.duplicate.status, 409);
      assert.equal(out.duplicate.body.reason, 'AlreadyExists');
    });

    it('patches: a dict is a strategic merge (lists with a merge strategy are merged), a list is a JSON patch', async () => {
      const out = await py.run(
        `
ns = ARGS
core.create_namespaced_config_map(ns, {'metadata': {'name': 'patched', 'finalizers': ['example.com/a']},
                                       'data': {'keep': 'k', 'drop': 'd'}})
strategic = core.patch_namespaced_config_map('patched', ns,
    {'metadata': {'finalizers': ['example.com/b']}, 'data': {'drop': None, 'new': 'n'}})
json_patched = core.patch_namespaced_config_map('patched', ns,
    [{'op': 'replace', 'path': '/data/keep', 'value': 'K'}, {'op': 'remove', 'path': '/metadata/finalizers'}])
bad = api_error(lambda: core.patch_namespaced_config_map('patched', ns, [{'op': 'test', 'path': '/data/keep', 'value': 'wrong'}]))
emit({'strategic': to_dict(strategic), 'json': to_dict(json_patched), 'bad': bad})
`,
        ns,
      );
      // finalizers carries patchStrategy "merge": a strategic patch adds to the list instead of replacing it.
      assert.deepEqual([...out.strategic.metadata.finalizers].sort(), ['example.com/a', 'example.com/b']);
      assert.deepEqual(out.strategic.data, { keep: 'k', new: 'n' });
      assert.deepEqual(out.json.data, { keep: 'K', new: 'n' });
      assert.equal(out.json.metadata.finalizers, undefined);
      assert.equal(out.bad.status, 422, JSON.stringify(out.bad));
    });

    it('merge-patches with an ApiClient that sends application/merge-patch+json (lists are replaced)', async () => {
      const out = await py.run(
        `
ns = ARGS
core.create_namespaced_config_map(ns, {'metadata': {'name': 'merged', 'finalizers': ['example.com/a']},
                                       'data': {'keep': 'k', 'drop': 'd'}})
merge = client.CoreV1Api(api_client_sending('application/merge-patch+json'))
merged = merge.patch_namespaced_config_map('merged', ns,
    {'metadata': {'finalizers': ['example.com/b']}, 'data': {'drop': None}})
core.patch_namespaced_config_map('merged', ns, [{'op': 'remove', 'path': '/metadata/finalizers'}])
emit(to_dict(merged))
`,
        ns,
      );
      assert.deepEqual(out.metadata.finalizers, ['example.com/b']);
      assert.deepEqual(out.data, { keep: 'k' });
    });

    it('server-side applies with field_manager, and force=True takes over a conflicting field', async () => {
      const out = await py.run(
        `
ns = ARGS
apply = client.CoreV1Api(api_client_sending('application/apply-patch+yaml'))
def config(value):
    return json.dumps({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'applied'}, 'data': {'owner': value}})
first = apply.patch_namespaced_config_map('applied', ns, config('first'), field_manager='py-first')
conflict = api_error(lambda: apply.patch_namespaced_config_map('applied', ns, config('second'), field_manager='py-second'))
not_forced = api_error(lambda: apply.patch_namespaced_config_map('applied', ns, config('second'), field_manager='py-second', force=False))
forced = apply.patch_namespaced_config_map('applied', ns, config('second'), field_manager='py-second', force=True)
emit({'first': first.data, 'conflict': conflict, 'notForced': not_forced, 'forced': to_dict(forced)})
`,
        ns,
      );
      assert.deepEqual(out.first, { owner: 'first' });
      assert.equal(out.conflict.status, 409);
      assert.match(out.conflict.body.message, /conflict with "py-first"/);
      assert.equal(out.notForced.status, 409);
      assert.deepEqual(out.forced.data, { owner: 'second' });
      const managers = out.forced.metadata.managedFields.map((m: { manager: string }) => m.manager);
      assert.deepEqual(managers, ['py-second']);
    });
  });

  describe('delete with orphaning', () => {
    let ns: string;
    before(async () => {
      ns = await namespace('py-delete');
    });

    // Creates a ConfigMap owner and a Secret it owns, deletes the owner with the given keyword arguments,
    // waits for the owner to go and reports the dependent as it is then (or None once it is gone).
    const script = `
ns, suffix, kwargs = ARGS['ns'], ARGS['suffix'], ARGS['kwargs']
if 'body' in kwargs:
    kwargs['body'] = client.V1DeleteOptions(**kwargs['body'])
owner = core.create_namespaced_config_map(ns, {'metadata': {'name': 'owner-' + suffix}})
ref = client.V1OwnerReference(api_version='v1', kind='ConfigMap', name=owner.metadata.name, uid=owner.metadata.uid)
core.create_namespaced_secret(ns, client.V1Secret(
    metadata=client.V1ObjectMeta(name='dependent-' + suffix, owner_references=[ref]), string_data={'k': 'v'}))
core.delete_namespaced_config_map('owner-' + suffix, ns, **kwargs)
def read_or_none(read, name):
    try:
        return to_dict(read(name, ns))
    except ApiException as e:
        if e.status != 404:
            raise
        return None
# The garbage collector works after the DELETE returns: wait until the owner is gone and the dependent is
# either gone too or released (no ownerReferences left).
deadline = time.monotonic() + 10
while True:
    owner_left = read_or_none(core.read_namespaced_config_map, 'owner-' + suffix)
    dependent = read_or_none(core.read_namespaced_secret, 'dependent-' + suffix)
    settled = dependent is None or not dependent['metadata'].get('ownerReferences')
    if (owner_left is None and settled) or time.monotonic() > deadline:
        break
    time.sleep(0.1)
emit({'ownerLeft': owner_left, 'dependent': dependent})
`;

    const orphaning: [string, object][] = [
      ["propagation_policy='Orphan'", { propagation_policy: 'Orphan' }],
      ['orphan_dependents=True', { orphan_dependents: true }],
      ["body=V1DeleteOptions(propagation_policy='Orphan')", { body: { propagation_policy: 'Orphan' } }],
    ];
    orphaning.forEach(([label, kwargs], i) => {
      it(`${label}: the dependent survives with its ownerReference removed`, async () => {
        const out = await py.run(script, { ns, suffix: `orphan-${i}`, kwargs });
        assert.equal(out.ownerLeft, null, 'the owner is deleted');
        assert.ok(out.dependent, 'the dependent still exists');
        assert.equal(out.dependent.metadata.ownerReferences, undefined);
        assert.deepEqual(out.dependent.data, { k: Buffer.from('v').toString('base64') });
      });
    });

    const cascading: [string, object][] = [
      ["propagation_policy='Background'", { propagation_policy: 'Background' }],
      ['orphan_dependents=False', { orphan_dependents: false }],
      ['no options (the default)', {}],
    ];
    cascading.forEach(([label, kwargs], i) => {
      it(`${label}: the dependent is deleted with its owner`, async () => {
        const out = await py.run(script, { ns, suffix: `cascade-${i}`, kwargs });
        assert.equal(out.ownerLeft, null, 'the owner is deleted');
        assert.equal(out.dependent, null);
      });
    });
  });

  describe('custom objects (the cert-manager CRDs of deploy/crds.yaml)', () => {
    let ns: string;
    before(async () => {
      ns = await namespace('py-custom');
      const out = await py.run(
        `
import yaml
ext = client.ApiextensionsV1Api()
names = []
with open(ARGS) as f:
    for doc in yaml.safe_load_all(f):
        if doc:
            names.append(ext.create_custom_resource_definition(doc).metadata.name)
custom = client.CustomObjectsApi()
deadline = time.monotonic() + 10
while True:
    try:
        custom.list_cluster_custom_object('cert-manager.io', 'v1', 'certificates')
        break
    except ApiException as e:
        if e.status != 404 or time.monotonic() > deadline:
            raise
        time.sleep(0.1)
emit(sorted(names))
`,
        CRDS_YAML,
      );
      assert.deepEqual(out, [
        'certificaterequests.cert-manager.io',
        'certificates.cert-manager.io',
        'challenges.acme.cert-manager.io',
        'clusterissuers.cert-manager.io',
        'issuers.cert-manager.io',
        'orders.acme.cert-manager.io',
      ]);
    });

    it('creates, gets, lists, patches and deletes a Certificate through CustomObjectsApi', async () => {
      const out = await py.run(
        `
ns = ARGS
custom = client.CustomObjectsApi()
group, version, plural = 'cert-manager.io', 'v1', 'certificates'
cert = {
    'apiVersion': 'cert-manager.io/v1', 'kind': 'Certificate',
    'metadata': {'name': 'web', 'labels': {'team': 'py'}},
    'spec': {'secretName': 'web-tls', 'dnsNames': ['web.example.com'],
             'issuerRef': {'name': 'ca', 'kind': 'Issuer'}},
}
created = custom.create_namespaced_custom_object(group, version, ns, plural, cert)
got = custom.get_namespaced_custom_object(group, version, ns, plural, 'web')
listed = custom.list_namespaced_custom_object(group, version, ns, plural, label_selector='team=py')
unlisted = custom.list_namespaced_custom_object(group, version, ns, plural, label_selector='team!=py')
everywhere = custom.list_cluster_custom_object(group, version, plural)
patched = custom.patch_namespaced_custom_object(group, version, ns, plural, 'web',
    {'spec': {'dnsNames': ['www.example.com'], 'renewBefore': '360h'}})
invalid = api_error(lambda: custom.create_namespaced_custom_object(group, version, ns, plural,
    {'apiVersion': 'cert-manager.io/v1', 'kind': 'Certificate', 'metadata': {'name': 'bad'},
     'spec': {'secretName': 5, 'issuerRef': {'name': 'ca'}}}))
deleted = custom.delete_namespaced_custom_object(group, version, ns, plural, 'web')
missing = api_error(lambda: custom.get_namespaced_custom_object(group, version, ns, plural, 'web'))
emit({'created': created, 'got': got, 'listed': [i['metadata']['name'] for i in listed['items']],
      'listKind': listed['kind'], 'unlisted': unlisted['items'],
      'everywhere': ['%s/%s' % (i['metadata']['namespace'], i['metadata']['name']) for i in everywhere['items']],
      'patched': patched, 'invalid': invalid, 'deleted': deleted, 'missing': missing})
`,
        ns,
      );
      assert.equal(out.created.metadata.namespace, ns);
      assert.match(out.created.metadata.uid, /^[0-9a-f-]{36}$/);
      assert.deepEqual(out.got.spec, out.created.spec);
      assert.deepEqual(out.listed, ['web']);
      assert.equal(out.listKind, 'CertificateList');
      assert.deepEqual(out.unlisted, []);
      assert.deepEqual(out.everywhere, [`${ns}/web`]);
      // CustomObjectsApi sends a JSON merge patch: the list is replaced, the rest of spec kept.
      assert.deepEqual(out.patched.spec.dnsNames, ['www.example.com']);
      assert.equal(out.patched.spec.renewBefore, '360h');
      assert.equal(out.patched.spec.secretName, 'web-tls');
      assert.equal(out.invalid.status, 422);
      assert.equal(out.invalid.body.reason, 'Invalid');
      assert.match(JSON.stringify(out.invalid.body.details.causes), /spec\.secretName/);
      assert.equal(out.missing.status, 404);
      assert.equal(out.missing.body.reason, 'NotFound');
    });

    it('watches Certificates through CustomObjectsApi with watch.Watch().stream', async () => {
      const out = await py.run(
        `
ns = ARGS
custom = client.CustomObjectsApi()
group, version, plural = 'cert-manager.io', 'v1', 'issuers'
rv = custom.list_namespaced_custom_object(group, version, ns, plural)['metadata']['resourceVersion']
def later():
    time.sleep(0.5)
    other = client.CustomObjectsApi(client.ApiClient())
    other.create_namespaced_custom_object(group, version, ns, plural,
        {'apiVersion': 'cert-manager.io/v1', 'kind': 'Issuer', 'metadata': {'name': 'selfsigned'}, 'spec': {'selfSigned': {}}})
    other.patch_namespaced_custom_object(group, version, ns, plural, 'selfsigned', {'metadata': {'labels': {'x': 'y'}}})
threading.Thread(target=later).start()
w = watch.Watch()
seen = []
for e in w.stream(custom.list_namespaced_custom_object, group, version, ns, plural, resource_version=rv, timeout_seconds=10):
    seen.append([e['type'], e['object']['kind'], e['object']['metadata']['name']])
    if e['type'] == 'MODIFIED':
        w.stop()
emit(seen)
`,
        ns,
      );
      assert.deepEqual(out, [
        ['ADDED', 'Issuer', 'selfsigned'],
        ['MODIFIED', 'Issuer', 'selfsigned'],
      ]);
    });
  });
});
