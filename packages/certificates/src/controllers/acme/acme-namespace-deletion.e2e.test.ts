/**
 * Deleting a namespace whose DNS-01 Challenge is presented (its TXT record in a real BIND, its finalizer on),
 * against a real Pebble and the whole certificate controller. The namespace controller deletes everything in
 * the namespace at once, the Issuer's TSIG Secret included, so a Challenge of an Issuer can no longer clean
 * up; one of a ClusterIssuer reads its Secret from the cluster resource namespace and still can. Either way
 * the namespace must go (docs/adr/1016).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNotFound } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import {
  ACME_ZONE,
  acmeEnvironmentSkip,
  eventually,
  startAcmeEnvironment,
  type AcmeEnvironment,
} from '@certkit/testenv/acme/acme-environment';
import type { Certificate, Challenge } from '../../api/types.ts';
import { clusterIssuersRef } from '../refs.ts';

const skip = acmeEnvironmentSkip();

interface CoreEvent {
  involvedObject: { kind: string; name: string; uid?: string };
  reason: string;
  message: string;
  type: string;
}

describe('ACME: deleting a namespace with a presented DNS-01 Challenge', { skip }, () => {
  let env: AcmeEnvironment;
  before(async () => {
    env = await startAcmeEnvironment();
  });
  after(async () => {
    await env?.close();
  });

  /** A DNS-01 solver that waits 10 minutes instead of self-checking: the TXT record stays presented. */
  function heldSolver() {
    return { ...env.dns01Solver(), waitInsteadOfSelfCheck: '10m' };
  }

  async function presentedChallenge(namespace: string, dnsName: string): Promise<Challenge> {
    const ch = await eventually(
      async () => {
        const items = (await env.resources.challenges.list(namespace)).items as Challenge[];
        return items.find((c) => c.status?.presented);
      },
      `the Challenge in ${namespace} presented`,
      30_000,
    );
    assert.deepEqual(ch.metadata.finalizers, ['acme.cert-manager.io/finalizer']);
    assert.equal((await env.bind.txt(`_acme-challenge.${dnsName}`)).length, 1, 'the TXT record is in BIND');
    return ch;
  }

  async function namespaceGone(namespace: string): Promise<void> {
    await eventually(
      async () => {
        try {
          await env.admin.resource(builtins.namespaces).get(undefined, namespace);
          return undefined;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      `namespace ${namespace} gone`,
      60_000,
    );
  }

  /** The Events recorded about the Namespace `name` (a cluster-scoped object's Events are in `default`). */
  async function namespaceEvents(name: string): Promise<CoreEvent[]> {
    const list = await env.admin.resource(builtins.events).list('default');
    return (list.items as unknown as CoreEvent[]).filter(
      (e) => e.involvedObject.kind === 'Namespace' && e.involvedObject.name === name,
    );
  }

  it('goes when its Issuer’s TSIG Secret went with it: the finalizer is let go and a Warning names the record left', async () => {
    const ns = 'gone-issuer';
    const dnsName = `a.${ACME_ZONE}`;
    await env.readyIssuer(ns, 'pebble', [heldSolver()]);
    await env.resources.certificates.create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'held', namespace: ns },
      spec: { secretName: 'held-tls', dnsNames: [dnsName], issuerRef: { name: 'pebble' } },
    } as Certificate);
    const ch = await presentedChallenge(ns, dnsName);
    const uid = (await env.admin.resource(builtins.namespaces).get(undefined, ns)).metadata?.uid;

    await env.admin.resource(builtins.namespaces).delete(undefined, ns);
    await namespaceGone(ns);

    // Nothing could remove the record (no TSIG key is left to sign the update): it is still there, and the
    // Event, on the Namespace where it outlives it, says which record and why.
    const txt = await env.bind.txt(`_acme-challenge.${dnsName}`);
    assert.deepEqual(txt, [ch.spec.key]);
    const events = await eventually(
      async () => {
        const found = (await namespaceEvents(ns)).filter((e) => e.reason === 'CleanUpAbandoned');
        return found.length > 0 ? found : undefined;
      },
      'the CleanUpAbandoned Event on the Namespace',
      10_000,
    );
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event.type, 'Warning');
    assert.equal(event.involvedObject.uid, uid);
    assert.equal(
      event.message,
      `Challenge ${ns}/${ch.metadata.name} could not clean up before namespace ${ns} went ` +
        `(rfc2136 TSIG secret: Secret ${ns}/${env.tsig.secretName} not found), so its finalizer was removed: ` +
        `the TXT record "_acme-challenge.${dnsName}." with value "${ch.spec.key}" is left in DNS`,
    );
  });

  it('goes after a ClusterIssuer’s Challenge cleaned up, its TSIG Secret being in the cluster resource namespace', async () => {
    const ns = 'gone-cluster';
    const dnsName = `b.${ACME_ZONE}`;
    await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
    await env.resources.secrets.create('kube-system', {
      metadata: { name: env.tsig.secretName, namespace: 'kube-system' },
      data: {
        [env.tsig.secretKey]: Buffer.from(env.bind.keys[env.tsig.algorithm].secret).toString('base64'),
      },
    } as never);
    await env.admin.resource(clusterIssuersRef).create(undefined, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'pebble-cluster' },
      spec: {
        acme: {
          server: env.pebble.directoryUrl,
          caBundle: Buffer.from(env.pebble.caBundle).toString('base64'),
          privateKeySecretRef: { name: 'pebble-cluster-account' },
          solvers: [heldSolver()],
        },
      },
    } as never);
    await env.resources.certificates.create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'held', namespace: ns },
      spec: {
        secretName: 'held-tls',
        dnsNames: [dnsName],
        issuerRef: { name: 'pebble-cluster', kind: 'ClusterIssuer' },
      },
    } as Certificate);
    await presentedChallenge(ns, dnsName);

    await env.admin.resource(builtins.namespaces).delete(undefined, ns);
    await namespaceGone(ns);
    assert.deepEqual(await env.bind.txt(`_acme-challenge.${dnsName}`), [], 'the TXT record was removed');
    assert.deepEqual(
      (await namespaceEvents(ns)).map((e) => e.reason),
      [],
      'nothing was abandoned',
    );
  });

  it('was allowed by deploy/rbac.yaml to read the namespaces it asked about', () => {
    // Other 403s are expected here: creates in a terminating namespace are refused (Events, Secrets).
    assert.ok(!env.forbidden.includes('get namespaces'), env.forbidden.join(', '));
  });
});
