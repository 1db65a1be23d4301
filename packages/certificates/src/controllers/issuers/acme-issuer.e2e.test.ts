/**
 * ACME Issuer and ClusterIssuer setup against real Pebble, through the embedded API server with the issuer
 * controllers running: cert-manager's issuer e2e cases (register, recover a lost account URI, email change,
 * EAB, a server that cannot be reached) plus the key Secret rules (generation, disableAccountKeyGeneration,
 * non-RSA keys) and a server change. Pebble's random badNonce rejections stay on.
 */

import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MetricsRegistry } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { registerAcmeClientMetrics } from '../../acme/client/metrics.ts';
import type { ClusterIssuer, Issuer } from '../../api/types.ts';
import { encodePrivateKey, generatePrivateKey } from '../../pki/index.ts';
import { pebbleSkip, startPebble, type Pebble } from '@certkit/testenv/pebble/pebble';
import {
  base64,
  clusterIssuers,
  condition,
  eventsFor,
  eventually,
  type Harness,
  issuers,
  secrets,
  startHarness,
} from '@certkit/testenv/controllers/certificaterequests-harness';
import { ACME_ACCOUNT_REGISTERED_MESSAGE, accountKeyHash } from './acme-setup.ts';

const skip = pebbleSkip();
const ns = 'acme';
const clusterNs = 'cert-manager';

describe('ACME issuer setup against Pebble', { skip }, () => {
  let h: Harness;
  let pebble: Pebble;
  let eabPebble: Pebble;
  const metrics = new MetricsRegistry();
  /** ACME requests to the default Pebble of one action so far (all statuses). */
  const requestsOf = (action: string) =>
    [...metrics.render().matchAll(/certmanager_http_acme_client_request_count\{([^}]*)\} (\d+)/g)]
      .filter(
        ([, labels]) =>
          labels.includes(`action="${action}"`) && labels.includes(new URL(pebble.directoryUrl).host),
      )
      .reduce((sum, [, , n]) => sum + Number(n), 0);

  before(async () => {
    [h, pebble, eabPebble] = await Promise.all([
      startHarness({
        namespaces: [ns, clusterNs],
        clusterResourceNamespace: clusterNs,
        acmeClientMetrics: registerAcmeClientMetrics(metrics),
      }),
      startPebble(),
      startPebble({ eabRequired: true }),
    ]);
  });

  after(async () => {
    await h?.close();
    await pebble?.stop();
    await eabPebble?.stop();
  });

  function acmeIssuer(name: string, acme: Record<string, unknown>, server: Pebble = pebble): Issuer {
    return {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name, namespace: ns },
      spec: {
        acme: {
          server: server.directoryUrl,
          caBundle: base64(server.caBundle),
          privateKeySecretRef: { name: `${name}-account-key` },
          ...acme,
        },
      },
    };
  }

  function readyIssuer(name: string, test: (c: NonNullable<ReturnType<typeof condition>>) => boolean) {
    return eventually(
      async () => {
        const issuer = await issuers(h).get(ns, name);
        const ready = condition(issuer, 'Ready');
        return ready && test(ready) ? { issuer, ready } : undefined;
      },
      `Issuer ${name} Ready condition`,
      20_000,
    );
  }

  const registered = (c: { status: string; reason?: string }) =>
    c.status === 'True' && c.reason === 'ACMEAccountRegistered';

  it('generates an RSA account key Secret, registers the account and records it in status.acme', async () => {
    await issuers(h).create(ns, acmeIssuer('le', { email: 'Admin@Example.test' }));
    const { issuer, ready } = await readyIssuer('le', registered);
    assert.equal(ready.message, ACME_ACCOUNT_REGISTERED_MESSAGE);
    assert.match(
      issuer.status?.acme?.uri ?? '',
      new RegExp(`^${new URL(pebble.directoryUrl).origin}/my-account/`),
    );
    assert.equal(issuer.status?.acme?.lastRegisteredEmail, 'Admin@Example.test');

    const secret = (await secrets(h).get(ns, 'le-account-key')) as Secret;
    assert.equal(secret.metadata?.labels?.['app.kubernetes.io/managed-by'], 'cert-manager');
    assert.equal(
      secret.metadata?.labels?.['controller.cert-manager.io/fao'],
      'true',
      'in the full Secret cache',
    );
    const pem = Buffer.from(secret.data?.['tls.key'] ?? '', 'base64').toString();
    assert.match(pem, /^-----BEGIN RSA PRIVATE KEY-----/);
    const key = createPrivateKey(pem);
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    assert.equal(issuer.status?.acme?.lastPrivateKeyHash, accountKeyHash(key));

    // The client is there for the Order controllers, and Pebble has the lower-cased contact.
    const client = h.ctx.acmeAccounts.get(issuer.metadata.uid ?? '');
    assert.ok(client, 'the registry holds the issuer client');
    const account = await client.getAccount();
    assert.equal(account.url, issuer.status?.acme?.uri);
    assert.deepEqual(account.contact, ['mailto:admin@example.test']);
    // The condition says so; cert-manager records no Event for a registered account.
    assert.equal(condition(issuer, 'Ready')?.message, ACME_ACCOUNT_REGISTERED_MESSAGE);
    await sleep(300);
    assert.deepEqual(
      (await eventsFor(h, ns, 'le')).map((e) => e.reason),
      [],
      'no Event for a registered account',
    );
  });

  it('does not ask the server again while the recorded account still matches', async () => {
    const issuer = await issuers(h).get(ns, 'le');
    const uid = issuer.metadata.uid ?? '';
    const client = h.ctx.acmeAccounts.get(uid);
    const [registrations, lookups] = [requestsOf('register_account'), requestsOf('get_registration')];
    assert.ok(registrations > 0);
    // A spec change that does not touch the account: reconciled (the condition follows the generation)...
    const updated = await issuers(h).update({
      ...issuer,
      spec: { acme: { ...issuer.spec.acme!, preferredChain: 'Some Root' } },
    });
    await readyIssuer('le', (c) => registered(c) && c.observedGeneration === updated.metadata.generation);
    // ...without an ACME request, and the Order controllers keep the client they may hold.
    assert.equal(requestsOf('register_account'), registrations);
    assert.equal(requestsOf('get_registration'), lookups);
    assert.equal(h.ctx.acmeAccounts.get(uid), client);
  });

  it('registers a new account when the key in the Secret is replaced, and records the new hash', async () => {
    await issuers(h).create(ns, acmeIssuer('rekey', { email: 'rekey@example.test' }));
    const { issuer } = await readyIssuer('rekey', registered);
    const secret = (await secrets(h).get(ns, 'rekey-account-key')) as Secret;
    const newKey = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
    await secrets(h).update({
      ...secret,
      data: { 'tls.key': base64(encodePrivateKey(newKey, 'PKCS1')) },
    } as never);
    const rekeyed = await eventually(async () => {
      const i = await issuers(h).get(ns, 'rekey');
      return i.status?.acme?.lastPrivateKeyHash === accountKeyHash(newKey) ? i : undefined;
    }, 'the new key hash');
    assert.notEqual(rekeyed.status?.acme?.uri, issuer.status?.acme?.uri, 'a new key is a new account');
    assert.equal(condition(rekeyed, 'Ready')?.status, 'True');
  });

  it('drops the client of a deleted issuer', async () => {
    await issuers(h).create(ns, acmeIssuer('short-lived', {}));
    const { issuer } = await readyIssuer('short-lived', registered);
    const uid = issuer.metadata.uid ?? '';
    assert.ok(h.ctx.acmeAccounts.get(uid));
    await issuers(h).delete(ns, 'short-lived');
    await eventually(() => (h.ctx.acmeAccounts.get(uid) ? undefined : true), 'client removed');
  });

  it('recovers a lost account URI: a new Issuer with the same key finds the same account', async () => {
    const first = await issuers(h).get(ns, 'le');
    const uri = first.status?.acme?.uri;
    await issuers(h).create(
      ns,
      acmeIssuer('le-again', {
        email: 'admin@example.test',
        privateKeySecretRef: { name: 'le-account-key' },
      }),
    );
    const { issuer } = await readyIssuer('le-again', registered);
    assert.equal(issuer.status?.acme?.uri, uri);
  });

  it('updates the account contact when spec.acme.email changes, and removes it when emptied', async () => {
    const current = await issuers(h).get(ns, 'le');
    await issuers(h).update({
      ...current,
      spec: { acme: { ...current.spec.acme!, email: 'new@example.test' } },
    });
    const { issuer } = await readyIssuer(
      'le',
      (c) => registered(c) && c.observedGeneration === (current.metadata.generation ?? 0) + 1,
    );
    const updated = await eventually(async () => {
      const i = await issuers(h).get(ns, 'le');
      return i.status?.acme?.lastRegisteredEmail === 'new@example.test' ? i : undefined;
    }, 'lastRegisteredEmail');
    assert.equal(updated.status?.acme?.uri, current.status?.acme?.uri, 'the same account');
    const client = h.ctx.acmeAccounts.get(issuer.metadata.uid ?? '');
    assert.deepEqual((await client!.getAccount()).contact, ['mailto:new@example.test']);

    const again = await issuers(h).get(ns, 'le');
    const { email: _email, ...withoutEmail } = again.spec.acme!;
    await issuers(h).update({ ...again, spec: { acme: withoutEmail } });
    await eventually(async () => {
      const i = await issuers(h).get(ns, 'le');
      return i.status?.acme?.uri && i.status.acme.lastRegisteredEmail === undefined ? i : undefined;
    }, 'lastRegisteredEmail cleared');
    assert.deepEqual(
      (await h.ctx.acmeAccounts.get(issuer.metadata.uid ?? '')!.getAccount()).contact ?? [],
      [],
    );
  });

  it('registers again on another server when spec.acme.server changes host', async () => {
    const other = await startPebble();
    try {
      await issuers(h).create(ns, acmeIssuer('moving', {}));
      const { issuer } = await readyIssuer('moving', registered);
      const before = issuer.status?.acme?.uri ?? '';
      await issuers(h).update({
        ...issuer,
        spec: {
          acme: { ...issuer.spec.acme!, server: other.directoryUrl, caBundle: base64(other.caBundle) },
        },
      });
      const moved = await eventually(async () => {
        const i = await issuers(h).get(ns, 'moving');
        return i.status?.acme?.uri?.startsWith(new URL(other.directoryUrl).origin) ? i : undefined;
      }, 'account on the other server');
      assert.notEqual(moved.status?.acme?.uri, before);
      assert.equal(condition(moved, 'Ready')?.status, 'True');
    } finally {
      await other.stop();
    }
  });

  it('with EAB required: refuses an account without binding, registers with it once its Secret exists', async () => {
    await issuers(h).create(ns, acmeIssuer('no-eab', {}, eabPebble));
    const refused = await readyIssuer('no-eab', (c) => c.status === 'False');
    assert.equal(refused.ready.reason, 'ErrRegisterACMEAccount');
    assert.match(
      refused.ready.message ?? '',
      /^Failed to register ACME account: 403 urn:ietf:params:acme:error:externalAccountRequired: /,
    );
    // A 4xx is final: cert-manager records no Event, neither the condition's nor ErrInitIssuer.
    await sleep(300);
    assert.deepEqual(
      (await eventsFor(h, ns, 'no-eab')).map((e) => e.reason),
      [],
    );

    // The deprecated keyAlgorithm is ignored: the binding is always HS256, which Pebble checks.
    const eab = {
      keyID: 'kid-1',
      keySecretRef: { name: 'eab-secret', key: 'secret' },
      keyAlgorithm: 'HS512',
    };
    await issuers(h).create(ns, acmeIssuer('with-eab', { externalAccountBinding: eab }, eabPebble));
    const missing = await readyIssuer('with-eab', (c) => c.status === 'False');
    assert.equal(missing.ready.reason, 'ErrRegisterACMEAccount');
    assert.equal(missing.ready.message, 'Failed to register ACME account: secrets "eab-secret" not found');
    // A missing EAB key is one of the few answers cert-manager's ACME Setup records as an Event.
    const eabWarning = await eventually(
      async () => (await eventsFor(h, ns, 'with-eab')).find((e) => e.reason === 'ErrRegisterACMEAccount'),
      'ErrRegisterACMEAccount event',
    );
    assert.equal(eabWarning.type, 'Warning');
    assert.equal(eabWarning.message, missing.ready.message);

    // Not retried on a timer: the Secret's creation is what brings the issuer back.
    await secrets(h).create(ns, {
      metadata: { name: 'eab-secret', namespace: ns },
      data: { secret: base64(eabPebble.eabKeys['kid-1']) },
    });
    await readyIssuer('with-eab', registered);
  });

  it('refuses an EAB key that is not unpadded base64url, as cert-manager does', async () => {
    await secrets(h).create(ns, {
      metadata: { name: 'padded-eab', namespace: ns },
      data: { secret: base64(`${eabPebble.eabKeys['kid-1']}==`) },
    });
    const eab = { keyID: 'kid-1', keySecretRef: { name: 'padded-eab', key: 'secret' } };
    await issuers(h).create(ns, acmeIssuer('padded', { externalAccountBinding: eab }, eabPebble));
    const { ready } = await readyIssuer('padded', (c) => c.status === 'False');
    assert.equal(ready.reason, 'ErrRegisterACMEAccount');
    assert.match(ready.message ?? '', /failed to decode external account binding key data/);
  });

  it('fails to register with a server that cannot be reached (Ready False, retried)', async () => {
    await issuers(h).create(ns, {
      ...acmeIssuer('unreachable', {}),
      spec: {
        acme: { server: 'https://127.0.0.1:1/directory', privateKeySecretRef: { name: 'unreachable-key' } },
      },
    });
    const { ready } = await readyIssuer('unreachable', (c) => c.status === 'False');
    assert.equal(ready.reason, 'ErrRegisterACMEAccount');
    assert.match(
      ready.message ?? '',
      /^Failed to register ACME account: ACME request to https:\/\/127\.0\.0\.1:1\//,
    );
    // Retried, so returned by Setup: cert-manager's issuers controller records it as ErrInitIssuer, and
    // Setup itself records nothing.
    const init = await eventually(
      async () => (await eventsFor(h, ns, 'unreachable')).find((e) => e.reason === 'ErrInitIssuer'),
      'ErrInitIssuer event',
    );
    assert.equal(init.type, 'Warning');
    assert.match(
      init.message ?? '',
      /^Error initializing issuer: ACME request to https:\/\/127\.0\.0\.1:1\//,
    );
    assert.deepEqual(
      (await eventsFor(h, ns, 'unreachable')).map((e) => e.reason),
      ['ErrInitIssuer'],
    );
  });

  it("says to set spec.acme.caBundle when the server's certificate chain is not trusted, and registers once set", async () => {
    const issuer = acmeIssuer('untrusted', {});
    const { caBundle, ...noBundle } = issuer.spec.acme!;
    await issuers(h).create(ns, { ...issuer, spec: { acme: noBundle } });
    const { ready } = await readyIssuer('untrusted', (c) => c.status === 'False');
    assert.equal(ready.reason, 'ErrRegisterACMEAccount');
    assert.equal(
      ready.message,
      `Failed to register ACME account: ACME request to ${pebble.directoryUrl} failed: tls: failed to verify certificate: x509: certificate signed by unknown authority (unable to verify the first certificate): give the CA that signed the server's certificate in spec.acme.caBundle`,
    );
    await issuers(h).patch(ns, 'untrusted', 'merge', { spec: { acme: { caBundle } } });
    await readyIssuer('untrusted', registered);
  });

  it('keeps the key Secret rules: no generation when disabled, RSA keys only, v1 URLs refused', async () => {
    await issuers(h).create(ns, acmeIssuer('no-gen', { disableAccountKeyGeneration: true }));
    const noGen = await readyIssuer('no-gen', (c) => c.status === 'False');
    assert.equal(noGen.ready.reason, 'ErrVerifyACMEAccount');
    assert.equal(
      noGen.ready.message,
      "Failed to verify ACME account: the ACME issuer config has 'disableAccountKeyGeneration' set to true, " +
        'but the secret was not found: secrets "no-gen-account-key" not found',
    );
    await assert.rejects(secrets(h).get(ns, 'no-gen-account-key'), /not found/i, 'no Secret was generated');

    const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    await secrets(h).create(ns, {
      metadata: { name: 'ec-key', namespace: ns },
      data: { 'tls.key': base64(encodePrivateKey(ec, 'PKCS8')) },
    });
    await issuers(h).create(ns, acmeIssuer('ec', { privateKeySecretRef: { name: 'ec-key' } }));
    const notRsa = await readyIssuer('ec', (c) => c.status === 'False');
    assert.equal(notRsa.ready.reason, 'ErrVerifyACMEAccount');
    assert.equal(notRsa.ready.message, 'ACME private key in "ec-key" is not of type RSA');

    await issuers(h).create(ns, {
      ...acmeIssuer('v1', {}),
      spec: {
        acme: {
          server: 'https://acme-v01.api.letsencrypt.org/directory',
          privateKeySecretRef: { name: 'v1-key' },
        },
      },
    });
    const v1 = await readyIssuer('v1', (c) => c.status === 'False');
    assert.equal(v1.ready.reason, 'InvalidConfig');
    assert.match(v1.ready.message ?? '', /should update the spec\.acme\.server field to "https:\/\/acme-v02/);
  });

  it('is not ready while a DNS-01 solver Secret is missing or lacks its key (InvalidSolver)', async () => {
    const solvers = [
      {
        dns01: {
          rfc2136: {
            nameserver: '127.0.0.1:53',
            tsigKeyName: 'certkit-key',
            tsigAlgorithm: 'HMACSHA256',
            tsigSecretSecretRef: { name: 'tsig', key: 'secret' },
          },
        },
      },
    ];
    await issuers(h).create(ns, acmeIssuer('dns', { solvers }));
    const missing = await readyIssuer('dns', (c) => c.status === 'False');
    assert.equal(missing.ready.reason, 'InvalidSolver');
    assert.equal(missing.ready.message, 'failed to get secret "tsig": secrets "tsig" not found');

    await secrets(h).create(ns, { metadata: { name: 'tsig', namespace: ns }, data: { other: base64('x') } });
    await readyIssuer(
      'dns',
      (c) => c.reason === 'InvalidSolver' && c.message === 'the secret "tsig" does not have key "secret"',
    );
    const secret = (await secrets(h).get(ns, 'tsig')) as Secret;
    await secrets(h).update({ ...secret, data: { secret: base64('c2VjcmV0') } } as never);
    await readyIssuer('dns', registered);
  });

  it('keeps a ClusterIssuer account key in the cluster resource namespace', async () => {
    const clusterIssuer: ClusterIssuer = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'cluster-le' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: base64(pebble.caBundle),
          privateKeySecretRef: { name: 'cluster-le-key', key: 'account.pem' },
        },
      },
    };
    await clusterIssuers(h).create(undefined, clusterIssuer);
    const found = await eventually(
      async () => {
        const ci = await clusterIssuers(h).get(undefined, 'cluster-le');
        return condition(ci, 'Ready')?.reason === 'ACMEAccountRegistered' ? ci : undefined;
      },
      'ClusterIssuer registered',
      20_000,
    );
    const secret = (await secrets(h).get(clusterNs, 'cluster-le-key')) as Secret;
    assert.ok(secret.data?.['account.pem'], 'the key is stored under the selected data key');
    assert.ok(found.status?.acme?.uri);
  });
});
