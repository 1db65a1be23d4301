import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { UserInfo } from '@certkit/apiserver/security/user';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { type PythonClient, pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * `GET …/configmaps/NAME?watch=true`: kube-apiserver's RequestInfo reads ListOptions (and so `watch`) only for a
 * path that names no object, so this is a get — answered with the object at once, authorised as `get` — and
 * only the legacy `/watch/` path watches one object by name.
 */

const skip = kubectlSkip || pythonClientSkip;
if (skip) console.log(`# skipping the named GET with watch suite: ${skip}`);

describe('a GET of a named object with watch=true', { skip }, () => {
  let t: TestServer;
  let workDir: string;
  let admin: Kubectl;
  let getter: Kubectl;
  let py: PythonClient;
  const ns = 'named-watch';
  const users: [string, UserInfo][] = [['getter-token', { name: 'getter', uid: 'g-1', groups: [] }]];

  before(async () => {
    t = await startTestServer({ tokens: new Map(users) });
    workDir = await mkdtemp(join(tmpdir(), 'certkit-named-watch-'));
    const env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
    admin = kubectlFor(env, workDir);
    const k = kubectlFor(env, workDir);
    getter = {
      ...k,
      run: (...a) => k.run('--token', 'getter-token', ...a),
      ok: (...a) => k.ok('--token', 'getter-token', ...a),
    };
    py = pythonClientFor(t.kubeconfigPath);
    await admin.ok('create', 'namespace', ns);
    await admin.ok('create', 'configmap', 'one', '-n', ns, '--from-literal=a=1');
    // `getter` may get ConfigMaps, and neither list nor watch them.
    await admin.ok('create', 'role', 'get-only', '-n', ns, '--verb=get', '--resource=configmaps');
    await admin.ok('create', 'rolebinding', 'get-only', '-n', ns, '--role=get-only', '--user=getter');
  });
  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('answers the object at once, as a get', async () => {
    const raw = await admin.ok('get', '--raw', `/api/v1/namespaces/${ns}/configmaps/one?watch=true`);
    const obj = JSON.parse(raw) as { kind: string; metadata: { name: string }; data: unknown };
    assert.equal(obj.kind, 'ConfigMap');
    assert.equal(obj.metadata.name, 'one');
    assert.deepEqual(obj.data, { a: '1' });
    const out = await py.run(
      `
ns = ARGS
data = core.api_client.call_api('/api/v1/namespaces/{namespace}/configmaps/{name}', 'GET',
    {'namespace': ns, 'name': 'one'}, [('watch', 'true'), ('resourceVersion', '0')],
    {'Accept': 'application/json'}, auth_settings=['BearerToken'], response_type='V1ConfigMap',
    _return_http_data_only=True, _request_timeout=10)
emit({'name': data.metadata.name, 'data': data.data})
`,
      ns,
    );
    assert.deepEqual(out, { name: 'one', data: { a: '1' } });
  });

  it('is authorised as get; the collection’s watch and the legacy /watch/ path need watch', async () => {
    const got = await getter.ok('get', '--raw', `/api/v1/namespaces/${ns}/configmaps/one?watch=1`);
    assert.equal((JSON.parse(got) as { metadata: { name: string } }).metadata.name, 'one');
    for (const path of [
      `/api/v1/namespaces/${ns}/configmaps?watch=1`,
      `/api/v1/watch/namespaces/${ns}/configmaps/one`,
    ]) {
      const refused = await getter.run('get', '--raw', path);
      assert.notEqual(refused.code, 0, path);
      assert.match(refused.stderr, /Error from server \(Forbidden\)/, path);
    }
  });
});
