import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Attributes, forbiddenError, nonResourceAttributes, requestAttributes } from './attributes.ts';
import { parseApiPath } from '../http/request-info.ts';
import { parseRequestTarget } from '../http/request-target.ts';
import { ruleAllows } from './policy-rule.ts';

const user = { name: 'alice', groups: ['system:authenticated'] };

function attrs(method: string, target: string): Attributes {
  const url = parseRequestTarget(target);
  return requestAttributes(user, method, url, parseApiPath(url.pathname));
}

describe('request attributes', () => {
  it('names the verb as kube-apiserver does', () => {
    assert.equal(attrs('GET', '/api/v1/namespaces/ns/secrets').verb, 'list');
    assert.equal(attrs('GET', '/api/v1/namespaces/ns/secrets?watch=true').verb, 'watch');
    assert.equal(attrs('GET', '/api/v1/watch/namespaces/ns/secrets').verb, 'watch');
    assert.equal(attrs('GET', '/api/v1/namespaces/ns/secrets/s').verb, 'get');
    assert.equal(attrs('POST', '/api/v1/namespaces/ns/secrets').verb, 'create');
    assert.equal(attrs('PUT', '/api/v1/namespaces/ns/secrets/s').verb, 'update');
    assert.equal(attrs('PATCH', '/api/v1/namespaces/ns/secrets/s').verb, 'patch');
    assert.equal(attrs('DELETE', '/api/v1/namespaces/ns/secrets/s').verb, 'delete');
    assert.equal(attrs('DELETE', '/api/v1/namespaces/ns/secrets').verb, 'deletecollection');
  });
  it('puts a namespace’s own requests inside it, and reads a name from a metadata.name field selector', () => {
    assert.equal(attrs('GET', '/api/v1/namespaces/team').namespace, 'team');
    assert.equal(attrs('GET', '/api/v1/namespaces/team/status').subresource, 'status');
    assert.equal(attrs('GET', '/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Dx').name, 'x');
  });
  it('treats discovery and other paths as non-resource requests', () => {
    for (const path of ['/api', '/api/v1', '/apis/rbac.authorization.k8s.io/v1', '/version']) {
      const a = attrs('GET', path);
      assert.equal(a.resourceRequest, false, path);
      assert.equal(a.path, path);
    }
  });
});

describe('rule matching', () => {
  const secrets = attrs('GET', '/api/v1/namespaces/ns/secrets/s');
  const status = attrs('PUT', '/apis/cert-manager.io/v1/namespaces/ns/certificates/c/status');
  it('matches verbs, groups and resources exactly or by *', () => {
    assert.ok(ruleAllows(secrets, { verbs: ['get'], apiGroups: [''], resources: ['secrets'] }));
    assert.ok(ruleAllows(secrets, { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }));
    assert.ok(!ruleAllows(secrets, { verbs: ['list'], apiGroups: [''], resources: ['secrets'] }));
    assert.ok(!ruleAllows(secrets, { verbs: ['get'], apiGroups: ['apps'], resources: ['secrets'] }));
    assert.ok(!ruleAllows(secrets, { verbs: ['get'], resources: ['secrets'] }));
  });
  it('matches subresources only as res/sub or */sub', () => {
    const g = ['cert-manager.io'];
    assert.ok(ruleAllows(status, { verbs: ['update'], apiGroups: g, resources: ['certificates/status'] }));
    assert.ok(ruleAllows(status, { verbs: ['update'], apiGroups: g, resources: ['*/status'] }));
    assert.ok(!ruleAllows(status, { verbs: ['update'], apiGroups: g, resources: ['certificates'] }));
    assert.ok(!ruleAllows(secrets, { verbs: ['get'], apiGroups: [''], resources: ['*/status'] }));
  });
  it('restricts to resource names, which a request without a name never matches', () => {
    const rule = {
      verbs: ['get', 'list', 'create'],
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: ['s'],
    };
    assert.ok(ruleAllows(secrets, rule));
    assert.ok(!ruleAllows(attrs('GET', '/api/v1/namespaces/ns/secrets/t'), rule));
    assert.ok(!ruleAllows(attrs('GET', '/api/v1/namespaces/ns/secrets'), rule));
    assert.ok(!ruleAllows(attrs('POST', '/api/v1/namespaces/ns/secrets'), rule));
  });
  it('matches non-resource URLs exactly, by *, or by a prefix ending in *', () => {
    const get = (path: string) => nonResourceAttributes(user, 'get', path);
    assert.ok(ruleAllows(get('/version'), { verbs: ['get'], nonResourceURLs: ['/version'] }));
    assert.ok(ruleAllows(get('/apis/x/v1'), { verbs: ['get'], nonResourceURLs: ['/apis/*'] }));
    assert.ok(!ruleAllows(get('/apis'), { verbs: ['get'], nonResourceURLs: ['/apis/*'] }));
    assert.ok(!ruleAllows(get('/metrics'), { verbs: ['get'], nonResourceURLs: ['/version'] }));
    // Resource rules never allow a non-resource request, and the other way round.
    assert.ok(!ruleAllows(get('/version'), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }));
    assert.ok(!ruleAllows(secrets, { verbs: ['*'], nonResourceURLs: ['*'] }));
  });
});

describe('403 Forbidden', () => {
  it('is worded as kube-apiserver words it', () => {
    const create = forbiddenError(attrs('POST', '/api/v1/namespaces/ns/secrets'));
    assert.equal(create.status.code, 403);
    assert.equal(
      create.status.message,
      'secrets is forbidden: User "alice" cannot create resource "secrets" in API group "" in the namespace "ns"',
    );
    assert.deepEqual(create.status.details, { kind: 'secrets' });
    const get = forbiddenError(attrs('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/x'));
    assert.equal(
      get.status.message,
      'clusterroles.rbac.authorization.k8s.io "x" is forbidden: User "alice" cannot get resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
    );
    assert.equal(
      forbiddenError(nonResourceAttributes(user, 'get', '/metrics')).status.message,
      'forbidden: User "alice" cannot get path "/metrics"',
    );
  });
});
