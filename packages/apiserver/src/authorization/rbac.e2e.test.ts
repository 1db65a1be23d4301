import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import type { UserInfo } from '../security/user.ts';
import { eventually } from '@certkit/testenv/eventually';

/**
 * RBAC as kubectl and the Python client see it: `auth can-i` for roles and bindings, a forbidden write and
 * its message, impersonation allowed and refused, aggregation into `view`, `auth whoami`, SubjectAccessReview,
 * and validation of the RBAC kinds. Users are token-file users outside system:masters.
 */

const skip = kubectlSkip;
if (skip) console.log(`# skipping the RBAC kubectl suite: ${skip}`);

const users: [string, UserInfo][] = [
  ['alice-token', { name: 'alice', uid: 'a-1', groups: [] }],
  ['bob-token', { name: 'bob', uid: 'b-1', groups: ['qa'] }],
];

describe('RBAC through kubectl', { skip }, () => {
  let t: TestServer;
  let workDir: string;
  let admin: Kubectl;
  let alice: Kubectl;
  let bob: Kubectl;

  before(async () => {
    t = await startTestServer({ tokens: new Map(users) });
    workDir = await mkdtemp(join(tmpdir(), 'certkit-rbac-'));
    const env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
    admin = kubectlFor(env, workDir);
    const as = (token: string): Kubectl => {
      const k = kubectlFor(env, workDir);
      return {
        ...k,
        run: (...args) => k.run('--token', token, ...args),
        ok: (...args) => k.ok('--token', token, ...args),
      };
    };
    alice = as('alice-token');
    bob = as('bob-token');
    for (const ns of ['team', 'other']) await admin.ok('create', 'namespace', ns);
  });
  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  /** `kubectl auth can-i` as the given client: true for "yes", false for "no" (exit 1). */
  async function canI(k: Kubectl, ...args: string[]): Promise<boolean> {
    const r = await k.run('auth', 'can-i', ...args);
    assert.ok(r.code === 0 || r.code === 1, `auth can-i ${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), r.code === 0 ? 'yes' : 'no');
    return r.code === 0;
  }

  it('says who the caller is (auth whoami), admin in system:masters and a token user authenticated', async () => {
    const me = JSON.parse(await admin.ok('auth', 'whoami', '-o', 'json'));
    assert.equal(me.kind, 'SelfSubjectReview');
    assert.equal(me.status.userInfo.username, 'certkit-admin');
    assert.deepEqual(me.status.userInfo.groups, ['system:masters', 'system:authenticated']);
    const a = JSON.parse(await alice.ok('auth', 'whoami', '-o', 'json'));
    assert.deepEqual(a.status.userInfo, { username: 'alice', uid: 'a-1', groups: ['system:authenticated'] });
  });

  it('lets a user without bindings do discovery and self-reviews, and nothing else', async () => {
    assert.equal(await canI(alice, 'get', '/version'), true);
    assert.equal(await canI(alice, 'get', '/apis/rbac.authorization.k8s.io/v1'), true);
    assert.equal(await canI(alice, 'get', '/metrics'), false);
    assert.equal(await canI(alice, 'list', 'secrets', '-n', 'team'), false);
    assert.equal(await canI(alice, 'create', 'selfsubjectaccessreviews.authorization.k8s.io'), true);
    // The admin is allowed anything, by the system:masters bypass.
    assert.equal(await canI(admin, 'delete', 'clusterroles'), true);
    assert.equal(await canI(admin, 'get', '/metrics'), true);
  });

  it('explains the RBAC kinds and the reviews (kubectl explain)', async () => {
    assert.match(await admin.ok('explain', 'clusterrole.aggregationRule'), /clusterRoleSelectors/);
    assert.match(await admin.ok('explain', 'selfsubjectaccessreview.spec'), /resourceAttributes/);
  });

  it('refuses a forbidden write with kube-apiserver’s message', async () => {
    const r = await alice.run('create', 'secret', 'generic', 's1', '-n', 'other', '--from-literal=a=b');
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'error: failed to create secret secrets is forbidden: User "alice" cannot create resource "secrets" in API group "" in the namespace "other"',
    );
    const get = await alice.run('get', 'namespace', 'team');
    assert.match(
      get.stderr,
      /namespaces "team" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "team"/,
    );
    const list = await alice.run('get', 'clusterroles');
    assert.match(
      list.stderr,
      /clusterroles.rbac.authorization.k8s.io is forbidden: User "alice" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope/,
    );
  });

  it('grants a ClusterRole inside one namespace through a RoleBinding', async () => {
    await admin.ok('create', 'rolebinding', 'alice-edit', '--clusterrole=edit', '--user=alice', '-n', 'team');
    await eventually(
      () => canI(alice, 'create', 'secrets', '-n', 'team'),
      'alice to be an editor in team',
      10_000,
      50,
    );
    assert.equal(await canI(alice, 'create', 'secrets', '-n', 'other'), false);
    assert.equal(await canI(alice, 'create', 'roles.rbac.authorization.k8s.io', '-n', 'team'), false);
    await alice.ok('create', 'secret', 'generic', 's1', '-n', 'team', '--from-literal=a=b');
    assert.match(await alice.ok('get', 'secret', 's1', '-n', 'team', '-o', 'name'), /secret\/s1/);
  });

  it('matches subresources, resource names, groups and ClusterRoleBindings', async () => {
    const role = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: one-configmap, namespace: other}
rules:
- {apiGroups: [""], resources: [configmaps], resourceNames: [allowed], verbs: [get, update]}
- {apiGroups: [""], resources: [namespaces/status], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: qa-one-configmap, namespace: other}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: one-configmap}
subjects: [{kind: Group, name: qa}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: namespace-reader}
rules: [{apiGroups: [""], resources: [namespaces], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bob-namespace-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: namespace-reader}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
`);
    await admin.ok('apply', '-f', role);
    await eventually(
      () => canI(bob, 'get', 'configmaps/allowed', '-n', 'other'),
      'bob to read configmap "allowed"',
      10_000,
      50,
    );
    assert.equal(await canI(bob, 'update', 'configmaps/allowed', '-n', 'other'), true);
    assert.equal(await canI(bob, 'get', 'configmaps/denied', '-n', 'other'), false);
    // A list has no name: a rule restricted to names never allows it.
    assert.equal(await canI(bob, 'list', 'configmaps', '-n', 'other'), false);
    assert.equal(await canI(bob, 'get', 'configmaps/allowed', '-n', 'team'), false);
    assert.equal(await canI(bob, 'get', 'namespaces/other', '--subresource=status', '-n', 'other'), true);
    await eventually(() => canI(bob, 'list', 'namespaces'), 'bob to list namespaces', 10_000, 50);
    assert.match(await bob.ok('get', 'namespaces', '-o', 'name'), /namespace\/team/);
    const rules = await bob.ok('auth', 'can-i', '--list', '-n', 'other');
    assert.match(rules, /configmaps\s+\[\]\s+\[allowed\]\s+\[get update\]/);
    assert.match(rules, /selfsubjectaccessreviews.authorization.k8s.io\s+\[\]\s+\[\]\s+\[create\]/);
    assert.match(rules, /\[\/version\]\s+\[\]\s+\[get\]/);
  });

  it('refuses impersonation to those not allowed it, and honours it for those who are', async () => {
    const refused = await alice.run('get', 'secrets', '-n', 'team', '--as', 'bob');
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    const groupRefused = await admin.run('auth', 'whoami', '--as', 'bob', '--as-group', 'qa');
    assert.equal(groupRefused.code, 0, groupRefused.stderr);
    const impersonator = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-bob}
rules: [{apiGroups: [""], resources: [users], resourceNames: [bob], verbs: [impersonate]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-impersonates-bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-bob}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
`);
    await admin.ok('apply', '-f', impersonator);
    await eventually(
      async () => (await alice.run('auth', 'whoami', '--as', 'bob')).code === 0,
      'alice to impersonate bob',
      10_000,
      50,
    );
    const who = JSON.parse(await alice.ok('auth', 'whoami', '--as', 'bob', '-o', 'json'));
    assert.deepEqual(who.status.userInfo, { username: 'bob', groups: ['system:authenticated'] });
    // Acting as bob, alice has bob's permissions, not her own.
    assert.equal(await canI(alice, 'list', 'namespaces', '--as', 'bob'), true);
    assert.equal(await canI(alice, 'create', 'secrets', '-n', 'team', '--as', 'bob'), false);
    // A group she may not impersonate is refused, though the user is allowed.
    const group = await alice.run('get', 'namespaces', '--as', 'bob', '--as-group', 'system:masters');
    assert.match(
      group.stderr,
      /groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope/,
    );
    const carol = await alice.run('get', 'namespaces', '--as', 'carol');
    assert.match(
      carol.stderr,
      /users "carol" is forbidden: User "alice" cannot impersonate resource "users"/,
    );
    // The admin may impersonate anyone, service accounts with their implicit groups.
    const sa = JSON.parse(
      await admin.ok('auth', 'whoami', '--as', 'system:serviceaccount:team:builder', '-o', 'json'),
    );
    assert.deepEqual(sa.status.userInfo.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:team',
      'system:authenticated',
    ]);
    assert.equal(await canI(admin, 'create', 'secrets', '-n', 'team', '--as', 'alice'), true);
    assert.equal(await canI(admin, 'create', 'secrets', '-n', 'other', '--as', 'alice'), false);
  });

  it('aggregates a ClusterRole labelled aggregate-to-view into view, edit and admin', async () => {
    // alice is an editor in team; edit does not let her read Roles (admin does).
    assert.equal(await canI(alice, 'list', 'roles.rbac.authorization.k8s.io', '-n', 'team'), false);
    const widgets = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widgets-view
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}
rules:
- {apiGroups: [widgets.example.com], resources: [widgets], verbs: [get, list, watch]}
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [list]}
`);
    await admin.ok('apply', '-f', widgets);
    const hasWidgets = async (role: string) =>
      JSON.parse(await admin.ok('get', 'clusterrole', role, '-o', 'json')).rules.some(
        (r: { apiGroups?: string[] }) => r.apiGroups?.includes('widgets.example.com'),
      );
    await eventually(() => hasWidgets('view'), 'view to include the widgets rule', 10_000, 50);
    await eventually(() => hasWidgets('edit'), 'edit to include the widgets rule', 10_000, 50);
    await eventually(() => hasWidgets('admin'), 'admin to include the widgets rule', 10_000, 50);
    // She gets the new permission there, through edit, which aggregates view.
    await eventually(
      () => canI(alice, 'list', 'roles.rbac.authorization.k8s.io', '-n', 'team'),
      'alice to list roles in team',
      10_000,
      50,
    );
    assert.equal(await canI(alice, 'list', 'roles.rbac.authorization.k8s.io', '-n', 'other'), false);
    await admin.ok('delete', 'clusterrole', 'widgets-view');
    await eventually(async () => !(await hasWidgets('view')), 'view to lose the widgets rule', 10_000, 50);
    await eventually(
      async () => !(await canI(alice, 'list', 'roles.rbac.authorization.k8s.io', '-n', 'team')),
      'alice to lose it',
      10_000,
      50,
    );
    // The bootstrap roles are there, labelled as kube labels them.
    const view = JSON.parse(await admin.ok('get', 'clusterrole', 'view', '-o', 'json'));
    assert.equal(view.metadata.labels['rbac.authorization.k8s.io/aggregate-to-edit'], 'true');
    assert.ok(view.rules.some((r: { resources?: string[] }) => r.resources?.includes('configmaps')));
    assert.ok(!view.rules.some((r: { resources?: string[] }) => r.resources?.includes('secrets')));
  });

  it('refuses roles and bindings that grant more than the writer holds, unless escalate or bind', async () => {
    await admin.ok('create', 'namespace', 'esc');
    await admin.ok(
      'create',
      'rolebinding',
      'alice-admin',
      '--clusterrole=admin',
      '--user=alice',
      '-n',
      'esc',
    );
    await eventually(
      () => canI(alice, 'create', 'roles.rbac.authorization.k8s.io', '-n', 'esc'),
      'alice to be admin in esc',
      10_000,
      50,
    );
    // Rules she holds there: allowed.
    await alice.ok('create', 'role', 'cm-reader', '--verb=get,list', '--resource=configmaps', '-n', 'esc');
    await alice.ok('create', 'rolebinding', 'bob-view', '--clusterrole=view', '--user=bob', '-n', 'esc');
    // More than she holds: refused, naming what she lacks.
    const role = await alice.run(
      'create',
      'role',
      'role-reader',
      '--verb=get',
      '--resource=clusterroles',
      '-n',
      'esc',
    );
    assert.equal(role.code, 1);
    assert.match(
      role.stderr,
      /roles.rbac.authorization.k8s.io "role-reader" is forbidden: user "alice" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["rbac.authorization.k8s.io"\], Resources:\["clusterroles"\], Verbs:\["get"\]\}/,
    );
    const bind = await alice.run(
      'create',
      'rolebinding',
      'bob-admin',
      '--clusterrole=cluster-admin',
      '--user=bob',
      '-n',
      'esc',
    );
    assert.match(
      bind.stderr,
      /rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "alice" .* is attempting to grant RBAC permissions not currently held/,
    );
    // With `bind` on cluster-admin she may bind it (only inside esc, as her RoleBinding says).
    const binder = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: bind-cluster-admin, namespace: esc}
rules: [{apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], resourceNames: [cluster-admin], verbs: [bind]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-binds, namespace: esc}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: bind-cluster-admin}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
`);
    await admin.ok('apply', '-f', binder);
    await eventually(
      async () =>
        (
          await alice.run(
            'create',
            'rolebinding',
            'bob-admin',
            '--clusterrole=cluster-admin',
            '--user=bob',
            '-n',
            'esc',
          )
        ).code === 0,
      'alice to bind cluster-admin in esc',
      10_000,
      50,
    );
    // An aggregated ClusterRole needs escalate; the admin has it (system:masters).
    const aggregated = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: everything-viewable}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}}]}
`);
    await admin.ok('create', '-f', aggregated);
    // Rules she does not hold, already in place, are no escalation of hers when her update leaves them as
    // they were, whatever order their fields come in (kubectl sends them sorted; this client did not).
    const placed = await t.fetch('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/esc/roles', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'placed-by-admin', namespace: 'esc' },
        rules: [{ verbs: ['get'], resources: ['clusterroles'], apiGroups: ['rbac.authorization.k8s.io'] }],
      },
    });
    assert.equal(placed.status, 201, placed.text);
    const relabelled = await alice.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: placed-by-admin, namespace: esc, labels: {team: a}}
rules: [{apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [get]}]
`);
    await alice.ok('replace', '-f', relabelled);
  });

  it('validates RBAC objects with field paths, and keeps roleRef immutable', async () => {
    const bad = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bad, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Secret, name: x}
subjects: [{kind: Robot, name: r2}]
`);
    const r = await admin.run('create', '-f', bad);
    assert.match(r.stderr, /The RoleBinding "bad" is invalid/);
    assert.match(
      r.stderr,
      /roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"/,
    );
    assert.match(r.stderr, /subjects\[0\].kind: Unsupported value: "Robot"/);
    const badRole = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: bad, namespace: team}
rules: [{nonResourceURLs: [/x], verbs: [get]}, {verbs: [get], resources: [pods]}]
`);
    const r2 = await admin.run('create', '-f', badRole);
    assert.match(
      r2.stderr,
      /rules\[0\].nonResourceURLs: Invalid value: .*namespaced rules cannot apply to non-resource URLs/,
    );
    assert.match(
      r2.stderr,
      /rules\[1\].apiGroups: Required value: resource rules must supply at least one api group/,
    );
    const r3 = await admin.run(
      'patch',
      'rolebinding',
      'alice-edit',
      '-n',
      'team',
      '--type=merge',
      '-p',
      '{"roleRef":{"name":"view"}}',
    );
    assert.match(r3.stderr, /roleRef: Invalid value: .*cannot change roleRef/);
  });

  it('defaults subjects as rbac/v1 does; a ServiceAccount binding applied again is unchanged', async () => {
    const binding = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: robot-view, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: robot, namespace: team}]
`);
    assert.match(await admin.ok('apply', '-f', binding), /rolebinding.* created/);
    // The core group of a ServiceAccount is "", which rbac/v1 (apiGroup,omitempty) never writes out: an
    // explicit "" made kubectl see a change on every apply.
    const subjects = await admin.ok(
      'get',
      'rolebinding',
      'robot-view',
      '-n',
      'team',
      '-o',
      'jsonpath={.subjects}',
    );
    assert.deepEqual(JSON.parse(subjects), [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team' }]);
    assert.match(await admin.ok('apply', '-f', binding), /rolebinding.* unchanged/);
    const user = await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-view, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, name: carol}]
`);
    await admin.ok('create', '-f', user);
    const userSubjects = await admin.ok(
      'get',
      'rolebinding',
      'carol-view',
      '-n',
      'team',
      '-o',
      'jsonpath={.subjects}',
    );
    assert.deepEqual(JSON.parse(userSubjects), [
      { kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' },
    ]);
  });
});

describe('access reviews through the Python client', { skip: pythonClientSkip }, () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ tokens: new Map(users) });
    const rb = await t.fetch('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      body: {
        metadata: { name: 'alice-view' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', name: 'alice' }],
      },
    });
    assert.equal(rb.status, 201, rb.text);
  });
  after(() => t?.close());

  it('answers SubjectAccessReview and LocalSubjectAccessReview for another user, storing nothing', async () => {
    const py = pythonClientFor(t.kubeconfigPath);
    const result = await py.run(`
authz = client.AuthorizationV1Api()
def sar(verb, resource, ns, user='alice', groups=None):
    body = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=user, groups=groups,
        resource_attributes=client.V1ResourceAttributes(verb=verb, resource=resource, namespace=ns)))
    return authz.create_subject_access_review(body).status.allowed
local = authz.create_namespaced_local_subject_access_review('default', client.V1LocalSubjectAccessReview(
    spec=client.V1SubjectAccessReviewSpec(user='alice',
        resource_attributes=client.V1ResourceAttributes(verb='list', resource='configmaps'))))
emit({
  'view': sar('list', 'configmaps', 'default'),
  'secrets': sar('get', 'secrets', 'default'),
  'elsewhere': sar('list', 'configmaps', 'kube-system'),
  'masters': sar('delete', 'nodes', '', user='root', groups=['system:masters']),
  'local': local.status.allowed,
  'localNamespace': local.spec.resource_attributes.namespace,
  'invalid': api_error(lambda: authz.create_subject_access_review(client.V1SubjectAccessReview(
      spec=client.V1SubjectAccessReviewSpec(user='alice')))),
  'get': api_error(lambda: authz.api_client.call_api('/apis/authorization.k8s.io/v1/subjectaccessreviews', 'GET',
      auth_settings=['BearerToken'], _preload_content=False)),
})
`);
    assert.equal(result.view, true);
    assert.equal(result.secrets, false);
    assert.equal(result.elsewhere, false);
    assert.equal(result.masters, true);
    assert.equal(result.local, true);
    assert.equal(result.localNamespace, 'default');
    assert.equal(result.invalid.status, 422);
    assert.match(
      result.invalid.body.message,
      /spec.resourceAttributes: Invalid value: .*exactly one of nonResourceAttributes or resourceAttributes must be specified/,
    );
    assert.equal(result.get.status, 405);
  });

  it('serves the reviews as create-only kinds: in discovery with the one verb, 405 otherwise, nothing stored', async () => {
    const discovery = await t.fetch('GET', '/apis/authorization.k8s.io/v1');
    assert.deepEqual(
      discovery.json.resources.map((r: { name: string; verbs: string[] }) => [r.name, r.verbs]),
      [
        ['subjectaccessreviews', ['create']],
        ['localsubjectaccessreviews', ['create']],
        ['selfsubjectaccessreviews', ['create']],
        ['selfsubjectrulesreviews', ['create']],
      ],
    );
    for (const [method, path] of [
      ['GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'],
      ['DELETE', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'],
      ['GET', '/apis/authentication.k8s.io/v1/selfsubjectreviews/x'],
    ]) {
      const res = await t.fetch(method, path);
      assert.equal(res.status, 405, `${method} ${path}: ${res.text}`);
    }
    const openapi = await t.fetch('GET', '/openapi/v3/apis/authorization.k8s.io/v1');
    assert.deepEqual(
      Object.keys(openapi.json.paths['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews']),
      ['post'],
    );
    const outside = await t.fetch('POST', '/apis/authorization.k8s.io/v1/localsubjectaccessreviews', {
      body: { spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } } },
    });
    assert.equal(outside.status, 404);
    const mismatch = await t.fetch(
      'POST',
      '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      {
        body: {
          spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' } },
        },
      },
    );
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json.message, 'spec.resourceAttributes.namespace must match namespace: default');
    // A review about someone else must name a user or a group, in both kinds.
    for (const [kind, path] of [
      ['SubjectAccessReview', '/apis/authorization.k8s.io/v1/subjectaccessreviews'],
      [
        'LocalSubjectAccessReview',
        '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      ],
    ]) {
      const nobody = await t.fetch('POST', path, {
        body: { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } },
      });
      assert.equal(nobody.status, 422, `${kind}: ${nobody.text}`);
      assert.equal(nobody.json.details.kind, kind);
      assert.match(
        nobody.json.message,
        /spec\.user: Invalid value: "": at least one of user or group must be specified/,
      );
    }
  });

  it('impersonates uids and extra fields for those allowed, and refuses the rest', async () => {
    const whoami = (headers: Record<string, string>) =>
      t.fetch('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { headers, body: {} });
    const admin = await whoami({
      'Impersonate-User': 'carol',
      'Impersonate-Uid': 'c-7',
      'Impersonate-Extra-Scopes': 'view',
      'Impersonate-Extra-Example.com%2Fteam': 'blue',
    });
    assert.equal(admin.status, 201, admin.text);
    assert.deepEqual(admin.json.status.userInfo, {
      username: 'carol',
      uid: 'c-7',
      groups: ['system:authenticated'],
      extra: { scopes: ['view'], 'example.com/team': ['blue'] },
    });
    const uid = await t.fetch('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      anonymous: true,
      headers: { Authorization: 'Bearer alice-token', 'Impersonate-User': 'alice', 'Impersonate-Uid': 'x' },
      body: {},
    });
    // Impersonating herself still needs the permission, as in kube.
    assert.equal(uid.status, 403);
    assert.equal(
      uid.json.message,
      'users "alice" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const groupsOnly = await whoami({ 'Impersonate-Group': 'system:masters' });
    assert.equal(groupsOnly.status, 400);
    assert.match(groupsOnly.json.message, /requires impersonating a user/);
  });

  it('lets ServiceAccounts read the token issuer discovery, and delegators review access', async () => {
    const sar = async (user: string, groups: string[], spec: Record<string, unknown>) => {
      const res = await t.fetch('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: { spec: { user, groups, ...spec } },
      });
      assert.equal(res.status, 201, res.text);
      return res.json.status.allowed as boolean;
    };
    const jwks = { nonResourceAttributes: { verb: 'get', path: '/openid/v1/jwks' } };
    const sa = 'system:serviceaccount:default:builder';
    assert.equal(await sar(sa, ['system:serviceaccounts', 'system:authenticated'], jwks), true);
    assert.equal(await sar('alice', ['system:authenticated'], jwks), false);
    const metrics = { nonResourceAttributes: { verb: 'get', path: '/metrics' } };
    assert.equal(await sar('prometheus', ['system:monitoring', 'system:authenticated'], metrics), true);
    assert.equal(await sar('alice', ['system:authenticated'], metrics), false);
    const review = {
      resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
    };
    assert.equal(await sar(sa, ['system:serviceaccounts', 'system:authenticated'], review), false);
    const bind = await t.fetch('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        metadata: { name: 'builder-delegates' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'system:auth-delegator',
        },
        subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'default' }],
      },
    });
    assert.equal(bind.status, 201, bind.text);
    for (let i = 0; !(await sar(sa, ['system:serviceaccounts', 'system:authenticated'], review)); i++) {
      assert.ok(i < 200, 'the binding never took effect');
      await sleep(20);
    }
  });

  it('refuses SubjectAccessReview to a user without the permission', async () => {
    const res = await t.fetch('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      anonymous: true,
      headers: { Authorization: 'Bearer alice-token' },
      body: { spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } } },
    });
    assert.equal(res.status, 403);
    assert.equal(
      res.json.message,
      'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
    );
  });
});

describe('--authorization-mode=AlwaysAllow', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ tokens: new Map(users), authorizationMode: 'AlwaysAllow' });
  });
  after(() => t?.close());

  it('lets every authenticated user do anything, and still refuses the unauthenticated', async () => {
    const create = await t.fetch('POST', '/api/v1/namespaces/default/secrets', {
      anonymous: true,
      headers: { Authorization: 'Bearer alice-token' },
      body: { metadata: { name: 's' }, stringData: { a: 'b' } },
    });
    assert.equal(create.status, 201, create.text);
    const anonymous = await t.fetch('GET', '/api/v1/namespaces/default/secrets', { anonymous: true });
    assert.equal(anonymous.status, 401);
    const rules = await t.fetch('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      anonymous: true,
      headers: { Authorization: 'Bearer alice-token' },
      body: { spec: { namespace: 'default' } },
    });
    assert.equal(rules.status, 201, rules.text);
    assert.deepEqual(rules.json.status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  });
});

describe('the bootstrap policy at restart', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t?.close());

  it('restores lost rules and subjects, and leaves alone what is marked autoupdate "false"', async () => {
    const path = '/apis/rbac.authorization.k8s.io/v1';
    const discovery = (await t.fetch('GET', `${path}/clusterroles/system:discovery`)).json;
    discovery.rules = [];
    assert.equal(
      (await t.fetch('PUT', `${path}/clusterroles/system:discovery`, { body: discovery })).status,
      200,
    );
    const basic = (await t.fetch('GET', `${path}/clusterrolebindings/system:basic-user`)).json;
    basic.subjects = [];
    assert.equal(
      (await t.fetch('PUT', `${path}/clusterrolebindings/system:basic-user`, { body: basic })).status,
      200,
    );
    const viewer = (await t.fetch('GET', `${path}/clusterroles/system:public-info-viewer`)).json;
    viewer.rules = [];
    viewer.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
    assert.equal(
      (await t.fetch('PUT', `${path}/clusterroles/system:public-info-viewer`, { body: viewer })).status,
      200,
    );
    await t.restart();
    const restored = (await t.fetch('GET', `${path}/clusterroles/system:discovery`)).json;
    assert.ok(restored.rules[0].nonResourceURLs.includes('/apis/*'));
    const rebound = (await t.fetch('GET', `${path}/clusterrolebindings/system:basic-user`)).json;
    assert.deepEqual(rebound.subjects, [
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' },
    ]);
    const kept = (await t.fetch('GET', `${path}/clusterroles/system:public-info-viewer`)).json;
    assert.deepEqual(kept.rules, []);
  });
});
