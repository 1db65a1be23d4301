import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { manifestServiceAccount, parseRbacManifest } from './controller-identity.ts';
import { CONTROLLER_RBAC_YAML, RBAC_YAML_PATH } from './rbac-manifest.ts';

describe('deploy/rbac.yaml', () => {
  it('is the manifest the package ships (run rbac-manifest.ts after editing it there)', () => {
    assert.equal(readFileSync(RBAC_YAML_PATH, 'utf8'), CONTROLLER_RBAC_YAML);
  });

  it('binds every role to its one ServiceAccount, certkit/certkit', () => {
    const objects = parseRbacManifest(CONTROLLER_RBAC_YAML);
    const account = manifestServiceAccount(objects);
    assert.deepEqual(account, { namespace: 'certkit', name: 'certkit' });
    const bindings = objects.filter((o) => o.kind?.endsWith('Binding')) as unknown as {
      subjects: { kind: string; name: string; namespace: string }[];
    }[];
    assert.ok(bindings.length >= 2);
    for (const binding of bindings) {
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', ...account }]);
    }
  });

  it('creates the Namespace before anything that lives in it', () => {
    const kinds = parseRbacManifest(CONTROLLER_RBAC_YAML).map((o) => o.kind);
    assert.equal(kinds[0], 'Namespace');
  });
});
