import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { OWN_SECRET_WRITE_WAIT_MS, OwnSecretWrites } from './own-secret-writes.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const OLD = b64('-----BEGIN CERTIFICATE-----\nold\n-----END CERTIFICATE-----\n');
const NEW = b64('-----BEGIN CERTIFICATE-----\nnew\n-----END CERTIFICATE-----\n');

const secret = (tlsCrt: string | undefined, name = 'web-tls'): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'apps' },
  data: tlsCrt === undefined ? {} : { 'tls.crt': tlsCrt },
});

describe('OwnSecretWrites', () => {
  it('has readers stand aside until the cached Secret holds the certificate written, then forgets it', () => {
    const writes = new OwnSecretWrites();
    writes.wrote('apps', 'web-tls', NEW, 1000);
    assert.equal(writes.expects('apps', 'web-tls'), true);
    assert.equal(writes.expects('apps', 'other-tls'), false);
    // The cache has no Secret yet, then the previous certificate: stand aside for what is left of the wait.
    assert.equal(writes.pendingMs('apps', 'web-tls', undefined, 1000), OWN_SECRET_WRITE_WAIT_MS);
    assert.equal(writes.pendingMs('apps', 'web-tls', secret(OLD), 1200), OWN_SECRET_WRITE_WAIT_MS - 200);
    assert.equal(writes.pendingMs('apps', 'web-tls', secret(NEW), 1300), undefined);
    assert.equal(writes.expects('apps', 'web-tls'), false, 'forgotten once shown');
    assert.equal(writes.pendingMs('apps', 'web-tls', secret(OLD), 1400), undefined, 'nothing expected');
  });

  it('lets readers go on once the wait lapses, as the old wait did after its timeout', () => {
    const writes = new OwnSecretWrites();
    writes.wrote('apps', 'web-tls', NEW, 1000);
    assert.ok(writes.pendingMs('apps', 'web-tls', secret(OLD), 1000 + OWN_SECRET_WRITE_WAIT_MS - 1));
    assert.equal(
      writes.pendingMs('apps', 'web-tls', secret(OLD), 1000 + OWN_SECRET_WRITE_WAIT_MS),
      undefined,
    );
    assert.equal(writes.size, 0);
  });

  it('a write without tls.crt is shown by a Secret without one', () => {
    const writes = new OwnSecretWrites();
    writes.wrote('apps', 'web-tls', undefined, 1000);
    assert.ok(writes.pendingMs('apps', 'web-tls', secret(OLD), 1000));
    assert.equal(writes.pendingMs('apps', 'web-tls', secret(undefined), 1000), undefined);
  });

  it('forgets a write when the Secret’s event shows it, and only then', () => {
    const writes = new OwnSecretWrites();
    writes.wrote('apps', 'web-tls', NEW, Date.now());
    writes.observed(secret(OLD));
    writes.observed(secret(NEW, 'other-tls'));
    assert.equal(writes.size, 1);
    writes.observed(secret(NEW));
    assert.equal(writes.size, 0);
  });

  it('sweeps lapsed writes as new ones come, so it does not grow with the Secrets written', () => {
    const writes = new OwnSecretWrites();
    for (let i = 0; i < 1000; i++) writes.wrote('apps', `s-${i}`, NEW, i);
    // Every write lapsed long ago when the next one comes: all but the newest go.
    writes.wrote('apps', 'last', NEW, 1000 + OWN_SECRET_WRITE_WAIT_MS);
    assert.equal(writes.size, 1);
    assert.equal(writes.expects('apps', 'last'), true);
  });
});
