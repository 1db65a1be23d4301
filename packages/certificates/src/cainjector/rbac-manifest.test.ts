import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { manifestServiceAccount, parseRbacManifest } from '../identity/controller-identity.ts';
import { CAINJECTOR_LEASE } from './cainjector.ts';
import { CAINJECTOR_RBAC_YAML, CAINJECTOR_RBAC_YAML_PATH } from './rbac-manifest.ts';

describe('deploy/cainjector-rbac.yaml', () => {
  it('is the manifest the package ships (run rbac-manifest.ts after editing it there)', () => {
    assert.equal(readFileSync(CAINJECTOR_RBAC_YAML_PATH, 'utf8'), CAINJECTOR_RBAC_YAML);
  });

  it('binds every role to its one ServiceAccount, certkit/certkit-cainjector', () => {
    const objects = parseRbacManifest(CAINJECTOR_RBAC_YAML);
    const account = manifestServiceAccount(objects);
    assert.deepEqual(account, { namespace: 'certkit', name: 'certkit-cainjector' });
    const bindings = objects.filter((o) => o.kind?.endsWith('Binding')) as unknown as {
      subjects: { kind: string; name: string; namespace: string }[];
    }[];
    assert.equal(bindings.length, 2);
    for (const binding of bindings)
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', ...account }]);
    assert.equal(objects[0]!.kind, 'Namespace');
  });

  it('lets it hold the Lease it campaigns for', () => {
    const role = parseRbacManifest(CAINJECTOR_RBAC_YAML).find((o) => o.kind === 'Role') as unknown as {
      rules: { resourceNames?: string[] }[];
    };
    assert.ok(role.rules.some((rule) => rule.resourceNames?.includes(CAINJECTOR_LEASE)));
  });
});
