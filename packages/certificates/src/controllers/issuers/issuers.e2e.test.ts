/**
 * Issuer and ClusterIssuer readiness against the real embedded API server, with the CertificateRequest
 * controllers running too (so a request waiting on an issuer is seen to proceed when it turns Ready).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterIssuer, Issuer } from '../../api/types.ts';
import { buildCertificateRequest, generatePrivateKey } from '../../pki/index.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import {
  certificateRequest,
  clusterIssuers,
  condition,
  eventsFor,
  eventually,
  type Harness,
  issuers,
  requests,
  secrets,
  startHarness,
  tlsSecret,
} from '@certkit/testenv/controllers/certificaterequests-harness';
import { KEY_PAIR_VERIFIED_MESSAGE } from './readiness.ts';

const ns = 'team';
const clusterNs = 'cert-manager';

let h: Harness;
let root: Awaited<ReturnType<typeof rootCa>>;

before(async () => {
  h = await startHarness({ namespaces: [ns, clusterNs], clusterResourceNamespace: clusterNs });
  root = await rootCa();
});

after(async () => {
  await h?.close();
});

function caIssuer(name: string, secretName: string): Issuer {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name, namespace: ns },
    spec: { ca: { secretName } },
  };
}

/** The issuer once its Ready condition satisfies `test`. */
function readyCondition(
  name: string,
  test: (c: NonNullable<ReturnType<typeof condition>>) => boolean,
  kind = 'Issuer',
) {
  return eventually(async () => {
    const issuer: Issuer | ClusterIssuer =
      kind === 'Issuer' ? await issuers(h).get(ns, name) : await clusterIssuers(h).get(undefined, name);
    const ready = condition(issuer, 'Ready');
    return ready && test(ready) ? { issuer, ready } : undefined;
  }, `${kind} ${name} Ready condition`);
}

function eventWith(namespace: string, name: string, reason: string) {
  return eventually(async () => {
    return (await eventsFor(h, namespace, name)).find((e) => e.reason === reason);
  }, `${reason} event on ${name}`);
}

describe('issuers controllers', () => {
  it('makes a SelfSigned issuer Ready with reason IsReady, for its generation', async () => {
    const created = await issuers(h).create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'self', namespace: ns },
      spec: { selfSigned: {} },
    });
    const { ready } = await readyCondition('self', (c) => c.status === 'True');
    assert.equal(ready.reason, 'IsReady');
    assert.equal(ready.observedGeneration, created.metadata.generation);
  });

  it('verifies a CA key pair: Ready, KeyPairVerified, with an event', async () => {
    await secrets(h).create(ns, tlsSecret(ns, 'good-ca', { certPem: root.certPem, key: root.key }));
    await issuers(h).create(ns, caIssuer('good', 'good-ca'));
    const { ready } = await readyCondition('good', (c) => c.status === 'True');
    assert.deepEqual([ready.reason, ready.message], ['KeyPairVerified', KEY_PAIR_VERIFIED_MESSAGE]);
    assert.equal((await eventWith(ns, 'good', 'KeyPairVerified')).type, 'Normal');
  });

  it('makes an Issuer created before its CA Secret Ready at once when the Secret appears', async () => {
    await issuers(h).create(ns, caIssuer('early', 'early-ca'));
    const { ready } = await readyCondition('early', (c) => c.status === 'False');
    assert.equal(ready.reason, 'ErrGetKeyPair');
    assert.equal(ready.message, 'Error getting keypair for CA issuer: secrets "early-ca" not found');
    assert.equal((await eventWith(ns, 'early', 'ErrGetKeyPair')).type, 'Warning');
    assert.equal(
      (await eventWith(ns, 'early', 'ErrInitIssuer')).message,
      'Error initializing issuer: secrets "early-ca" not found',
    );

    // A request waiting on it.
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'early.example.com' }, key);
    await requests(h).create(ns, certificateRequest(ns, 'early-req', csrPem, { name: 'early' }));
    await eventually(async () => {
      const cr = await requests(h).get(ns, 'early-req');
      return condition(cr, 'Ready')?.reason === 'Pending' ? cr : undefined;
    }, 'early-req Pending');

    // The first retry is 5 s away; the Secret (unlabelled, so seen as a metadata stub) must not wait for it.
    await sleep(300);
    const created = Date.now();
    await secrets(h).create(ns, tlsSecret(ns, 'early-ca', { certPem: root.certPem, key: root.key }));
    await readyCondition('early', (c) => c.status === 'True');
    const readyAfter = Date.now() - created;
    assert.ok(readyAfter < 1_000, `Ready ${readyAfter} ms after the Secret was created`);
    await eventually(async () => {
      const cr = await requests(h).get(ns, 'early-req');
      return condition(cr, 'Ready')?.reason === 'Issued' ? cr : undefined;
    }, 'early-req Issued');
    assert.ok(Date.now() - created < 2_000, `issued ${Date.now() - created} ms after the Secret was created`);
  });

  it("says which entry a CA Secret lacks in CA.Setup's words: tls.crt first, then tls.key", async () => {
    // The usual mistakes: `kubectl create secret generic` with the certificate alone, or with the wrong keys.
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const { data } = tlsSecret(ns, 'x', { certPem: root.certPem, key: root.key });
    const cases = [
      { name: 'cert-only', data: { 'tls.crt': data!['tls.crt'] }, lacks: 'tls.key' },
      { name: 'key-only', data: { 'tls.key': data!['tls.key'] }, lacks: 'tls.crt' },
      {
        name: 'wrong-keys',
        data: { 'ca.crt': b64(root.certPem), 'ca.key': data!['tls.key'] },
        lacks: 'tls.crt',
      },
    ];
    for (const c of cases) {
      await secrets(h).create(ns, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${c.name}-ca`, namespace: ns },
        data: c.data,
      });
      await issuers(h).create(ns, caIssuer(c.name, `${c.name}-ca`));
    }
    for (const c of cases) {
      const { ready } = await readyCondition(c.name, (r) => r.status === 'False');
      assert.equal(ready.reason, 'ErrGetKeyPair', c.name);
      assert.equal(
        ready.message,
        `Error getting keypair for CA issuer: no data for "${c.lacks}" in secret '${ns}/${c.name}-ca'`,
      );
      assert.equal((await eventWith(ns, c.name, 'ErrGetKeyPair')).message, ready.message);
      // And cert-manager's issuers controller's own Warning for the error Setup returned.
      const init = await eventWith(ns, c.name, 'ErrInitIssuer');
      assert.equal(init.type, 'Warning');
      assert.equal(
        init.message,
        `Error initializing issuer: no data for "${c.lacks}" in secret '${ns}/${c.name}-ca'`,
      );
    }
  });

  it('reports bad CA data as ErrGetKeyPair, with a Warning event', async () => {
    await secrets(h).create(ns, tlsSecret(ns, 'garbage-ca', { certPem: 'not a certificate', key: root.key }));
    await issuers(h).create(ns, caIssuer('garbage', 'garbage-ca'));
    const { ready } = await readyCondition('garbage', (c) => c.status === 'False');
    assert.equal(ready.reason, 'ErrGetKeyPair');
    assert.match(ready.message!, /^Error getting keypair for CA issuer: /);
    const event = await eventWith(ns, 'garbage', 'ErrGetKeyPair');
    assert.equal(event.type, 'Warning');
    assert.equal(event.message, ready.message);

    // Mending the Secret makes the issuer Ready through the Secret's update event.
    const fixed = tlsSecret(ns, 'garbage-ca', { certPem: root.certPem, key: root.key });
    const current = await secrets(h).get(ns, 'garbage-ca');
    await secrets(h).update({ ...current, data: fixed.data } as never);
    await eventually(
      async () => {
        const issuer = await issuers(h).get(ns, 'garbage');
        return condition(issuer, 'Ready')?.status === 'True' ? issuer : undefined;
      },
      'garbage Ready after the fix',
      2_000,
    );
  });

  it('rejects a certificate that is not a CA, and a key that is not its own, as ErrInvalidKeyPair', async () => {
    const leaf = await issue({ spec: { commonName: 'leaf.example.com' } });
    await secrets(h).create(ns, tlsSecret(ns, 'leaf-ca', { certPem: leaf.certPem, key: leaf.key }));
    await issuers(h).create(ns, caIssuer('leaf', 'leaf-ca'));
    const notCA = await readyCondition('leaf', (c) => c.status === 'False');
    assert.equal(notCA.ready.reason, 'ErrInvalidKeyPair');
    assert.equal(notCA.ready.message, 'Error getting keypair for CA issuer: certificate is not a CA');
    assert.equal((await eventWith(ns, 'leaf', 'ErrInvalidKeyPair')).type, 'Warning');

    const other = await generatePrivateKey({ algorithm: 'ECDSA' });
    await secrets(h).create(ns, tlsSecret(ns, 'mismatch-ca', { certPem: root.certPem, key: other }));
    await issuers(h).create(ns, caIssuer('mismatch', 'mismatch-ca'));
    const mismatch = await readyCondition('mismatch', (c) => c.status === 'False');
    assert.equal(mismatch.ready.reason, 'ErrInvalidKeyPair');
    assert.match(mismatch.ready.message!, /private key does not match/);
  });

  it('reports an invalid spec as InvalidIssuer, with a Warning event', async () => {
    await issuers(h).create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'typeless', namespace: ns },
      spec: {},
    });
    const { ready } = await readyCondition('typeless', (c) => c.status === 'False');
    assert.equal(ready.reason, 'InvalidIssuer');
    assert.match(ready.message!, /^Issuer spec is invalid: /);
    assert.equal((await eventWith(ns, 'typeless', 'InvalidIssuer')).type, 'Warning');
  });

  it('re-checks an issuer whose spec changed, for the new generation', async () => {
    const current = await issuers(h).get(ns, 'leaf');
    const updated = await issuers(h).update({ ...current, spec: { ca: { secretName: 'good-ca' } } });
    assert.ok(updated.metadata.generation! > current.metadata.generation!);
    const { ready } = await readyCondition('leaf', (c) => c.status === 'True');
    assert.equal(ready.observedGeneration, updated.metadata.generation);
    assert.equal(ready.reason, 'KeyPairVerified');
  });

  it('reads a ClusterIssuer CA Secret from the cluster resource namespace, even one created later', async () => {
    // The same name in another namespace is not it.
    await secrets(h).create(ns, tlsSecret(ns, 'cluster-root', { certPem: root.certPem, key: root.key }));
    await clusterIssuers(h).create(undefined, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'cluster-ca' },
      spec: { ca: { secretName: 'cluster-root' } },
    });
    const { ready } = await readyCondition('cluster-ca', (c) => c.status === 'False', 'ClusterIssuer');
    assert.equal(ready.reason, 'ErrGetKeyPair');
    // Events about cluster-scoped objects go to the default namespace.
    assert.equal((await eventWith('default', 'cluster-ca', 'ErrGetKeyPair')).type, 'Warning');

    await sleep(300);
    const created = Date.now();
    await secrets(h).create(
      clusterNs,
      tlsSecret(clusterNs, 'cluster-root', { certPem: root.certPem, key: root.key }),
    );
    await readyCondition('cluster-ca', (c) => c.status === 'True', 'ClusterIssuer');
    assert.ok(Date.now() - created < 1_000, `Ready ${Date.now() - created} ms after the Secret was created`);
  });
});
