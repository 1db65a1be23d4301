import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceDefinition } from '../registry/resource.ts';
import { matchingVersion, ruleMatches, type RuleTarget } from './rules.ts';

const pods: RuleTarget = {
  operation: 'CREATE',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
};
const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({
  operations: ['*'],
  apiGroups: ['*'],
  apiVersions: ['*'],
  resources,
  ...extra,
});

describe('webhook rules', () => {
  it('match resources and subresources as kube-apiserver does', () => {
    const status = { ...pods, subresource: 'status' };
    assert.equal(ruleMatches(rule(['pods']), pods), true);
    assert.equal(ruleMatches(rule(['pods']), status), false, 'pods does not match pods/status');
    assert.equal(ruleMatches(rule(['pods/status']), status), true);
    assert.equal(ruleMatches(rule(['pods/status']), pods), false);
    assert.equal(ruleMatches(rule(['*']), pods), true);
    assert.equal(ruleMatches(rule(['*']), status), false, '* matches no subresource');
    assert.equal(ruleMatches(rule(['*/*']), status), true);
    assert.equal(ruleMatches(rule(['pods/*']), status), true);
    assert.equal(ruleMatches(rule(['pods/*']), pods), true, 'x/* matches x itself');
    assert.equal(ruleMatches(rule(['*/status']), status), true);
    assert.equal(ruleMatches(rule(['*/status']), pods), false);
  });

  it('match operations, groups and versions, `*` matching any', () => {
    assert.equal(ruleMatches(rule(['pods'], { operations: ['UPDATE'] }), pods), false);
    assert.equal(ruleMatches(rule(['pods'], { operations: ['CREATE', 'UPDATE'] }), pods), true);
    assert.equal(ruleMatches(rule(['pods'], { apiGroups: ['apps'] }), pods), false);
    assert.equal(ruleMatches(rule(['pods'], { apiGroups: [''] }), pods), true);
    assert.equal(ruleMatches(rule(['pods'], { apiVersions: ['v2'] }), pods), false);
  });

  it('match scope: Namespaced excludes Namespaces and cluster-scoped objects, Cluster the reverse', () => {
    const namespace = { ...pods, resource: 'namespaces', namespace: 'default' };
    const clusterScoped = { ...pods, resource: 'clusterroles', namespace: '' };
    assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), pods), true);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), namespace), false);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), clusterScoped), false);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), namespace), true);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), clusterScoped), true);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), pods), false);
  });

  it("with matchPolicy Equivalent, match another served version; with Exact, only the request's", () => {
    const def = { versions: ['v1', 'v1beta1'] } as ResourceDefinition;
    const target = { ...pods, group: 'example.com', resource: 'widgets', version: 'v1beta1' };
    const hook = { rules: [rule(['widgets'], { apiVersions: ['v1'] })] };
    assert.equal(matchingVersion({ ...hook, matchPolicy: 'Equivalent' }, def, target), 'v1');
    assert.equal(matchingVersion({ ...hook, matchPolicy: 'Exact' }, def, target), undefined);
    assert.equal(
      matchingVersion({ ...hook, matchPolicy: 'Equivalent' }, def, { ...target, version: 'v1' }),
      'v1',
    );
  });
});
