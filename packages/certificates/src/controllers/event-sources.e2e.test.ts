/**
 * Which controller each Event names as its source, as cert-manager users read it in `kubectl describe` (From)
 * and `kubectl get events -o wide` (SOURCE), and filter it (`--field-selector source=…`): cert-manager gives
 * each controller a recorder of its own, whose component is `cert-manager-<controller name>`, and client-go
 * copies it into reportingComponent (events.k8s.io/v1's reportingController). The whole controller runs
 * against the embedded API server under deploy/rbac.yaml's identity, and issues through CA issuers.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import type { Event } from 'kubernetes-types/core/v1.d.ts';
import { kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import {
  type Environment,
  eventually,
  prepareIssuer,
  readyAndDoneIssuing,
  startEnvironment,
} from '@certkit/testenv/conformance/environment';

const NS = 'event-sources';

let env: Environment;

before(async () => {
  env = await startEnvironment();
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
});

after(async () => {
  await env?.close();
});

async function eventsOf(namespace: string, kind: string, name: string): Promise<Event[]> {
  const list = await env.admin
    .resource(builtins.events)
    .list(namespace, { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
  return list.items as unknown as Event[];
}

/** Waits until every reason in `sources` has an Event on the object, then checks the source of each. */
async function expectSources(
  namespace: string,
  kind: string,
  name: string,
  sources: Record<string, string>,
): Promise<Event[]> {
  const events = await eventually(
    async () => {
      const found = await eventsOf(namespace, kind, name);
      return Object.keys(sources).every((reason) => found.some((e) => e.reason === reason))
        ? found
        : undefined;
    },
    `${kind} ${name}'s events ${Object.keys(sources).join(', ')}`,
    30_000,
  );
  for (const [reason, component] of Object.entries(sources)) {
    // '': waited for here, its source checked by the caller.
    if (!component) continue;
    for (const event of events.filter((e) => e.reason === reason)) {
      assert.equal(event.source?.component, component, `${kind} ${reason}: ${event.message}`);
      assert.equal(event.reportingComponent, component, `${kind} ${reason} reportingComponent`);
      assert.equal(event.reportingInstance ?? '', '', 'cert-manager has no host in its EventSource');
    }
  }
  return events;
}

describe('Event sources are the cert-manager controllers that record them', () => {
  it('Issuer, ClusterIssuer, Certificate and CertificateRequest events, each from its own controller', async () => {
    const issuer = await prepareIssuer(env, { title: 'CA Issuer', kind: 'Issuer', type: 'CA' }, NS, 'ev');
    const clusterIssuer = await prepareIssuer(
      env,
      { title: 'CA ClusterIssuer', kind: 'ClusterIssuer', type: 'CA' },
      NS,
      'ev',
    );
    await expectSources(NS, 'Issuer', issuer.issuerRef.name, { KeyPairVerified: 'cert-manager-issuers' });
    // A ClusterIssuer's Events go to the default namespace, as client-go puts those of cluster-scoped objects.
    await expectSources('default', 'ClusterIssuer', clusterIssuer.issuerRef.name, {
      KeyPairVerified: 'cert-manager-clusterissuers',
    });

    await env.certificates.create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace: NS },
      spec: { secretName: 'web-tls', dnsNames: ['web.example.com'], issuerRef: clusterIssuer.issuerRef },
    });
    await eventually(
      async () => (readyAndDoneIssuing(await env.certificates.get(NS, 'web')) ? true : undefined),
      'Certificate web Ready',
      30_000,
    );
    const certEvents = await expectSources(NS, 'Certificate', 'web', {
      Issuing: '',
      Generated: 'cert-manager-certificates-key-manager',
      Requested: 'cert-manager-certificates-request-manager',
    });
    // Two Issuing events, from two controllers: the trigger starts the issuance, issuing ends it.
    const issuing = certEvents.filter((e) => e.reason === 'Issuing');
    assert.deepEqual(issuing.map((e) => [e.source?.component, e.message]).sort(), [
      ['cert-manager-certificates-issuing', 'The certificate has been successfully issued'],
      ['cert-manager-certificates-trigger', 'Issuing certificate as Secret does not exist'],
    ]);

    await expectSources(NS, 'CertificateRequest', 'web-1', {
      'cert-manager.io': 'cert-manager-certificaterequests-approver',
      CertificateIssued: 'cert-manager-certificaterequests-issuer-ca',
    });
  });

  it('a missing issuer: approved by the approver, IssuerNotFound from a signer', async () => {
    await env.certificates.create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'orphan', namespace: NS },
      spec: { secretName: 'orphan-tls', dnsNames: ['orphan.example.com'], issuerRef: { name: 'nowhere' } },
    });
    const events = await expectSources(NS, 'CertificateRequest', 'orphan-1', {
      'cert-manager.io': 'cert-manager-certificaterequests-approver',
      IssuerNotFound: '',
    });
    // Every cert-manager signer reports a missing issuer; certkit's one reporting signer is one of them.
    const notFound = events.find((e) => e.reason === 'IssuerNotFound');
    assert.match(notFound?.source?.component ?? '', /^cert-manager-certificaterequests-issuer-[a-z]+$/);
    assert.equal(notFound?.reportingComponent, notFound?.source?.component);
  });

  it('kubectl describe certificate shows From as cert-manager does', { skip: kubectlSkip }, async () => {
    const kubectl = kubectlFor({ ...process.env, KUBECONFIG: env.server.kubeconfigPath }, env.server.dataDir);
    const described = await kubectl.ok('describe', 'certificate', 'web', '-n', NS);
    assert.match(
      described,
      /Normal\s+Issuing\s+\S+\s+cert-manager-certificates-trigger\s+Issuing certificate as/,
    );
    assert.match(described, /Normal\s+Generated\s+\S+\s+cert-manager-certificates-key-manager\s+Stored new/);
    assert.match(
      described,
      /Normal\s+Requested\s+\S+\s+cert-manager-certificates-request-manager\s+Created new/,
    );
    assert.match(
      described,
      /Normal\s+Issuing\s+\S+\s+cert-manager-certificates-issuing\s+The certificate has been successfully issued/,
    );
    const wide = await kubectl.ok(
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      'source=cert-manager-certificates-issuing',
      '-o',
      'wide',
    );
    assert.match(wide, /Issuing\s+certificate\/web\s+cert-manager-certificates-issuing\s+/);
    assert.doesNotMatch(wide, /Generated/);
  });
});
