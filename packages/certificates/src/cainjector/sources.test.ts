import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { caSourceFor, splitNamespacedName } from './sources.ts';

const target = (annotations: Record<string, string>) => ({ metadata: { name: 't', annotations } });
const on = { certificates: true };

describe('caSourceFor', () => {
  it('reads each of the three annotations', () => {
    assert.deepEqual(caSourceFor(target({ 'cert-manager.io/inject-ca-from': 'ns/cert' }), on), {
      kind: 'certificate',
      namespace: 'ns',
      name: 'cert',
    });
    assert.deepEqual(caSourceFor(target({ 'cert-manager.io/inject-ca-from-secret': 'ns/s' }), on), {
      kind: 'secret',
      namespace: 'ns',
      name: 's',
    });
    assert.deepEqual(caSourceFor(target({ 'cert-manager.io/inject-apiserver-ca': 'true' }), on), {
      kind: 'apiserver',
    });
  });

  it('prefers a Secret, then a Certificate, then the API server, as cainjector', () => {
    const all = {
      'cert-manager.io/inject-ca-from': 'ns/cert',
      'cert-manager.io/inject-ca-from-secret': 'ns/s',
      'cert-manager.io/inject-apiserver-ca': 'true',
    };
    assert.equal(caSourceFor(target(all), on)?.kind, 'secret');
    const { 'cert-manager.io/inject-ca-from-secret': _, ...noSecret } = all;
    assert.equal(caSourceFor(target(noSecret), on)?.kind, 'certificate');
    assert.equal(caSourceFor(target(noSecret), { certificates: false })?.kind, 'apiserver');
  });

  it('ignores inject-ca-from when the certificates data source is off, and "false" for the API server', () => {
    assert.equal(
      caSourceFor(target({ 'cert-manager.io/inject-ca-from': 'ns/c' }), { certificates: false }),
      undefined,
    );
    assert.equal(caSourceFor(target({ 'cert-manager.io/inject-apiserver-ca': 'false' }), on), undefined);
    assert.equal(caSourceFor({ metadata: { name: 'plain' } }, on), undefined);
  });

  it('calls a value without a namespace or a name invalid, naming the annotation', () => {
    for (const value of ['cert', '/cert', 'ns/', '']) {
      assert.deepEqual(caSourceFor(target({ 'cert-manager.io/inject-ca-from': value }), on), {
        kind: 'invalid',
        annotation: 'cert-manager.io/inject-ca-from',
        value,
      });
    }
  });

  it('splits at the first slash, as types.NamespacedName', () => {
    assert.deepEqual(splitNamespacedName('a/b/c'), { namespace: 'a', name: 'b/c' });
  });
});
