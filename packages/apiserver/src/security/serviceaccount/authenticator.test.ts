import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import type { StoredObject } from '@certkit/apimachinery';
import { ServiceAccountTokenAuthenticator } from './authenticator.ts';
import { tokenClaims } from './claims.ts';
import { resolveTokenConfig } from './config.ts';
import { signToken } from './issuer.ts';
import { signingKeyFromPem } from './keys.ts';

/**
 * The ServiceAccount token authenticator in process, on a clock of its own and objects held in a map (the
 * watch cache's part): what it caches, for how long, and what it checks again on every request.
 */

const ISSUER = 'https://issuer.test';
const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;
const config = resolveTokenConfig({ issuers: [ISSUER], signingKey: signingKeyFromPem(pem, 'test') });

/** Objects by `resource/namespace/name`; `async` makes lookups answer as storage does (a promise). */
class Objects {
  readonly items = new Map<string, StoredObject['metadata']>();
  async = false;
  lookups = 0;
  metadata(resource: string, namespace: string, name: string) {
    this.lookups++;
    const meta = this.items.get(`${resource}/${namespace}/${name}`);
    return this.async ? Promise.resolve(meta) : meta;
  }
}

function setup() {
  let now = Date.parse('2026-11-26T12:00:00Z');
  const objects = new Objects();
  objects.items.set('serviceaccounts/ns/robot', { name: 'robot', namespace: 'ns', uid: 'sa-uid' });
  const authenticator = new ServiceAccountTokenAuthenticator(config, objects, () => now);
  const issue = (extra: Partial<Parameters<typeof tokenClaims>[0]> = {}) =>
    signToken(
      config,
      tokenClaims({
        issuer: ISSUER,
        namespace: 'ns',
        serviceAccount: { name: 'robot', uid: 'sa-uid' },
        audiences: [ISSUER],
        expirationSeconds: 600,
        now: Math.floor(now / 1000),
        ...extra,
      }),
    );
  return { objects, authenticator, issue, advance: (ms: number) => (now += ms) };
}

describe('ServiceAccountTokenAuthenticator', () => {
  it('makes the ServiceAccount user, with its uid, groups and credential id', async () => {
    const { authenticator, issue } = setup();
    const user = await authenticator.authenticate(await issue());
    assert.equal(user?.name, 'system:serviceaccount:ns:robot');
    assert.equal(user?.uid, 'sa-uid');
    assert.deepEqual(user?.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:ns',
      'system:authenticated',
    ]);
    assert.match(
      user?.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '',
      /^JTI=[0-9a-f-]{36}$/,
    );
  });

  it('answers a token verified a moment ago synchronously, and verifies it again after ten seconds', async () => {
    const { authenticator, issue, advance } = setup();
    const token = await issue();
    assert.ok((authenticator.authenticate(token) as unknown) instanceof Promise, 'the first check verifies');
    await authenticator.authenticate(token);
    const again = authenticator.authenticate(token);
    assert.ok(!((again as unknown) instanceof Promise), 'a cached token should be answered at once');
    assert.equal((again as { name: string }).name, 'system:serviceaccount:ns:robot');
    advance(10_001);
    assert.ok(
      (authenticator.authenticate(token) as unknown) instanceof Promise,
      'the cache entry outlived its TTL',
    );
  });

  it('checks the ServiceAccount on every request, cached or not', async () => {
    const { authenticator, issue, objects } = setup();
    const token = await issue();
    assert.ok(await authenticator.authenticate(token));
    objects.items.set('serviceaccounts/ns/robot', { name: 'robot', namespace: 'ns', uid: 'another-uid' });
    assert.equal(authenticator.authenticate(token), undefined);
    objects.items.set('serviceaccounts/ns/robot', { name: 'robot', namespace: 'ns', uid: 'sa-uid' });
    assert.ok(await authenticator.authenticate(token));
    objects.items.delete('serviceaccounts/ns/robot');
    objects.async = true;
    assert.equal(await authenticator.authenticate(token), undefined);
  });

  it('lets a ServiceAccount being deleted authenticate for the minute of leeway only', async () => {
    const { authenticator, issue, objects, advance } = setup();
    const token = await issue();
    const deletedAt = new Date(Date.parse('2026-11-26T12:00:00Z')).toISOString();
    objects.items.set('serviceaccounts/ns/robot', {
      name: 'robot',
      namespace: 'ns',
      uid: 'sa-uid',
      deletionTimestamp: deletedAt,
    });
    assert.ok(await authenticator.authenticate(token));
    advance(61_000);
    assert.equal(await authenticator.authenticate(token), undefined);
  });

  it('never caches past the token expiry (plus leeway)', async () => {
    const { authenticator, issue, advance } = setup();
    const token = await issue();
    assert.ok(await authenticator.authenticate(token));
    advance(600_000 + 59_000);
    assert.ok(await authenticator.authenticate(token), 'within the leeway');
    advance(2_000);
    assert.equal(await authenticator.authenticate(token), undefined);
  });

  it('requires a bound Secret or Pod to exist with its uid, and names the Pod in extra', async () => {
    const { authenticator, issue, objects } = setup();
    objects.items.set('pods/ns/web', { name: 'web', namespace: 'ns', uid: 'pod-uid' });
    const token = await issue({ bound: { kind: 'Pod', ref: { name: 'web', uid: 'pod-uid' } } });
    const user = await authenticator.authenticate(token);
    assert.deepEqual(user?.extra?.['authentication.kubernetes.io/pod-name'], ['web']);
    assert.deepEqual(user?.extra?.['authentication.kubernetes.io/pod-uid'], ['pod-uid']);
    objects.items.delete('pods/ns/web');
    assert.equal(await authenticator.authenticate(token), undefined);
    const secret = await issue({ bound: { kind: 'Secret', ref: { name: 's', uid: 'secret-uid' } } });
    assert.equal(await authenticator.authenticate(secret), undefined, 'no such Secret');
  });

  it('leaves bearer tokens that are no JWS, or of another issuer, alone', async () => {
    const { authenticator, issue, objects } = setup();
    assert.equal(authenticator.authenticate('static-token'), undefined);
    assert.equal(authenticator.authenticate('a..b'), undefined);
    const foreign = await issue({ issuer: 'https://someone-else.test' });
    assert.equal(await authenticator.authenticate(foreign), undefined);
    assert.equal(objects.lookups, 0, 'no object is read for tokens that are not ours');
  });
});
