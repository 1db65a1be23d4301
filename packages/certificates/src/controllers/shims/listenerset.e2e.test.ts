/**
 * cert-manager's listenerset controller against the embedded API server, driven as users drive it: kubectl
 * applies Gateways and ListenerSets (the Gateway API v1.6.1 standard CRDs, CEL rules included) and the
 * Certificates their listeners ask for appear, take the Gateway's issuer when the ListenerSet names none, follow
 * the ListenerSet and its Gateway, become Ready, and go with the ListenerSet through the garbage collector.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import {
  readyStatus,
  type ShimCluster,
  type ShimTestCluster,
  startShimTestCluster,
} from '@certkit/testenv/controllers/shim-cluster';
import { eventually } from '@certkit/testenv/eventually';
import { type Kubectl, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { enabledControllers } from '../enabled-controllers.ts';
import { certificatesRef } from '../refs.ts';
import { requireGatewayApi } from './gateway-api.ts';

const NS = 'listenersets';
/** Where one Gateway lives apart from its ListenerSets (parentRef.namespace). */
const EDGE = 'edge';

let cluster: ShimTestCluster;
let shims: ShimCluster;
let kubectl: Kubectl;
let withoutListenerSets: unknown;

const gateway = (
  name: string,
  annotations = '{}',
  namespace = NS,
  extra = '',
) => `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: ${name}
  namespace: ${namespace}
  annotations: ${annotations}
${extra}spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: All}}
  listeners:
  - {name: http, protocol: HTTP, port: 80}
`;

const listenerSet = (
  name: string,
  annotations: string,
  parentRef: string,
  listeners: string,
) => `apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: ${name}
  namespace: ${NS}
  annotations: ${annotations}
spec:
  parentRef: ${parentRef}
  listeners:
${listeners}`;

/** An HTTPS listener terminating TLS with one Secret. */
const https = (name: string, hostname: string, secret: string, port = 443) =>
  `  - {name: ${name}, protocol: HTTPS, port: ${port}, hostname: ${hostname}, tls: {mode: Terminate, certificateRefs: [{name: ${secret}}]}}\n`;

const uidOf = async (kind: string, name: string, namespace = NS) =>
  JSON.parse(await kubectl.ok('get', kind, name, '-n', namespace, '-o', 'json')).metadata.uid as string;

before(async () => {
  cluster = await startShimTestCluster(NS);
  shims = cluster;
  kubectl = cluster.kubectl;
  if (kubectlSkip) return;
  // Gateways first, as on a cluster with an older Gateway API install: the listenerset controller refuses it.
  await cluster.installGatewayApi('gateways');
  withoutListenerSets = await requireGatewayApi(cluster.admin, { listenerSets: true }).then(
    () => undefined,
    (err: unknown) => err,
  );
  await cluster.installGatewayApi('listenersets');
  await requireGatewayApi(cluster.admin, { listenerSets: true });
  await cluster.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: EDGE } });
  await shims.apply(`apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: selfsigned}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: team-issuer, namespace: ${NS}}
spec: {selfSigned: {}}
`);
  cluster.startController({
    controllers: enabledControllers(['*'], { gatewayAPI: true, listenerSets: true }),
  });
});

after(async () => {
  await cluster?.close();
});

describe('listenerset on a cluster whose Gateway API has no ListenerSet', { skip: kubectlSkip }, () => {
  it('refuses to start, in cert-manager’s words', () => {
    assert.ok(withoutListenerSets instanceof Error, String(withoutListenerSets));
    assert.equal(
      withoutListenerSets.message,
      'found GatewayAPI CRDs; however the Gateway API ListenerSet CRD do not seem to be present, but ListenerSets is set to true. Please install the gateway-api ListenerSet CRD.',
    );
  });
});

describe('listenerset', { skip: kubectlSkip }, () => {
  before(async () => {
    await shims.apply(gateway('edge-gw'));
  });

  it('the API server holds ListenerSets to their CRD’s rules: TLS on a plain HTTP listener is refused', async () => {
    const refused = await kubectl.run(
      'apply',
      '-f',
      await kubectl.manifest(
        listenerSet(
          'http-with-tls',
          '{cert-manager.io/cluster-issuer: selfsigned}',
          '{name: edge-gw}',
          '  - {name: web, protocol: HTTP, port: 80, hostname: m.example.com, tls: {certificateRefs: [{name: m-tls}]}}\n',
        ),
      ),
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /tls must not be specified for protocols \['HTTP', 'TCP', 'UDP'\]/);
    assert.match(refused.stderr, /spec\.listeners/);
  });

  it('kubectl apply of an annotated ListenerSet: a Certificate per Secret its TLS listeners name, Ready', async () => {
    await shims.apply(
      listenerSet(
        'team-a',
        '{cert-manager.io/cluster-issuer: selfsigned, cert-manager.io/ignore-tls-listeners: "skipped, other", cert-manager.io/duration: 48h}',
        '{name: edge-gw}',
        https('https', 'a.example.com', 'a-tls') +
          https('www', 'www.a.example.com', 'a-tls', 8443) +
          https('skipped', 'skipped.a.example.com', 'skipped-tls', 9443) +
          `  - {name: passthrough, protocol: TLS, port: 6443, hostname: pt.a.example.com, tls: {mode: Passthrough}}
  - {name: plain, protocol: HTTP, port: 8080, hostname: plain.a.example.com}
  - {name: nohost, protocol: HTTPS, port: 7443, tls: {mode: Terminate, certificateRefs: [{name: nohost-tls}]}}
`,
      ),
    );
    const a = await eventually(() => shims.certificate('a-tls'), 'Certificate a-tls', 20_000, 50);
    assert.deepEqual(a.metadata?.ownerReferences, [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'ListenerSet',
        name: 'team-a',
        uid: await uidOf('listenerset', 'team-a'),
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(a.metadata?.annotations, {
      'acme.cert-manager.io/http01-parentrefkind': 'ListenerSet',
      'acme.cert-manager.io/http01-parentrefname': 'team-a',
    });
    assert.deepEqual(a.spec, {
      secretName: 'a-tls',
      issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      dnsNames: ['a.example.com', 'www.a.example.com'],
      duration: '48h0m0s',
      usages: ['digital signature', 'key encipherment'],
    });
    const created = await shims.eventAbout(
      'ListenerSet',
      'team-a',
      'CreateCertificate',
      'Successfully created Certificate "a-tls"',
    );
    assert.equal(created.source?.component, 'cert-manager-listenerset');
    const skipped = await shims.eventAbout(
      'ListenerSet',
      'team-a',
      'BadConfig',
      'Skipped a listener block: spec.listeners[5].hostname: Required value: the hostname cannot be empty',
    );
    assert.equal(skipped.type, 'Warning');
    await eventually(
      async () => readyStatus(await shims.certificate('a-tls')) === 'True',
      'a-tls Ready',
      30_000,
      100,
    );
    // Ignored by name, passthrough, plain HTTP and the bad listener: none has a Certificate.
    for (const name of ['skipped-tls', 'nohost-tls']) assert.equal(await shims.certificate(name), undefined);
    assert.equal((await cluster.admin.resource(certificatesRef).list(NS)).items.length, 1);
  });

  it('a listener removed deletes its Certificate; one deleted by hand comes back; the ListenerSet deleted collects it', async () => {
    await shims.apply(
      listenerSet(
        'team-a',
        '{cert-manager.io/cluster-issuer: selfsigned}',
        '{name: edge-gw}',
        https('https', 'a.example.com', 'a-tls') + https('api', 'api.a.example.com', 'api-tls', 8443),
      ),
    );
    await eventually(() => shims.certificate('api-tls'), 'Certificate api-tls', 20_000, 50);
    await shims.apply(
      listenerSet(
        'team-a',
        '{cert-manager.io/cluster-issuer: selfsigned}',
        '{name: edge-gw}',
        https('https', 'a.example.com', 'a-tls'),
      ),
    );
    await eventually(
      async () => (await shims.certificate('api-tls')) === undefined,
      'api-tls deleted',
      20_000,
      50,
    );
    await shims.eventAbout(
      'ListenerSet',
      'team-a',
      'DeleteCertificate',
      'Successfully deleted unrequired Certificate "api-tls"',
    );

    const first = await shims.certificate('a-tls');
    await kubectl.ok('delete', 'certificate', 'a-tls', '-n', NS);
    const again = await eventually(
      async () => {
        const c = await shims.certificate('a-tls');
        return c && c.metadata?.uid !== first?.metadata?.uid ? c : undefined;
      },
      'a-tls created again',
      20_000,
      50,
    );
    assert.deepEqual(again.spec.dnsNames, ['a.example.com']);

    await kubectl.ok('delete', 'listenerset', 'team-a', '-n', NS);
    await eventually(
      async () => (await shims.certificate('a-tls')) === undefined,
      'a-tls collected',
      30_000,
      100,
    );
  });

  it('a ListenerSet that names no issuer takes its Gateway’s; its own wins; the Gateway’s issuer-kind always applies', async () => {
    await shims.apply(gateway('shared', '{cert-manager.io/issuer: team-issuer}'));
    await shims.apply(
      listenerSet('team-b', '{}', '{name: shared}', https('https', 'b.example.com', 'b-tls')) +
        '---\n' +
        listenerSet(
          'team-c',
          '{cert-manager.io/cluster-issuer: selfsigned}',
          '{name: shared}',
          https('https', 'c.example.com', 'c-tls'),
        ),
    );
    const b = await eventually(() => shims.certificate('b-tls'), 'Certificate b-tls', 20_000, 50);
    assert.deepEqual(b.spec.issuerRef, { name: 'team-issuer', kind: 'Issuer', group: 'cert-manager.io' });
    assert.equal(b.metadata?.ownerReferences?.[0]?.name, 'team-b');
    const c = await eventually(() => shims.certificate('c-tls'), 'Certificate c-tls', 20_000, 50);
    assert.deepEqual(c.spec.issuerRef, {
      name: 'selfsigned',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });

    // The Gateway's change reaches its ListenerSets: the kind goes to both, which c's cluster-issuer refuses.
    await kubectl.ok('annotate', 'gateway', 'shared', '-n', NS, 'cert-manager.io/issuer-kind=ClusterIssuer');
    await eventually(
      async () => (await shims.certificate('b-tls'))?.spec.issuerRef.kind === 'ClusterIssuer',
      'b-tls with the Gateway’s issuer-kind',
      20_000,
      50,
    );
    await shims.eventAbout(
      'ListenerSet',
      'team-c',
      'BadConfig',
      'Could not determine issuer for ingress due to bad annotations: both "cert-manager.io/cluster-issuer" and "cert-manager.io/issuer-kind" may not be set',
    );

    // A Gateway that asks for nothing itself still passes its issuer-kind on.
    await shims.apply(gateway('kinded', '{cert-manager.io/issuer-kind: ClusterIssuer}'));
    await shims.apply(
      listenerSet(
        'team-d',
        '{cert-manager.io/issuer: selfsigned}',
        '{name: kinded}',
        https('https', 'd.example.com', 'd-tls'),
      ),
    );
    const d = await eventually(() => shims.certificate('d-tls'), 'Certificate d-tls', 20_000, 50);
    assert.deepEqual(d.spec.issuerRef, {
      name: 'selfsigned',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    await eventually(
      async () => readyStatus(await shims.certificate('d-tls')) === 'True',
      'd-tls Ready',
      30_000,
      100,
    );
  });

  it('nothing while its Gateway is missing or being deleted; the Gateway’s arrival, in another namespace, brings it', async () => {
    await shims.apply(gateway('going', '{}', NS, '  finalizers: [example.com/hold]\n'));
    await kubectl.ok('delete', 'gateway', 'going', '-n', NS, '--wait=false');
    await shims.apply(
      listenerSet(
        'late',
        '{cert-manager.io/cluster-issuer: selfsigned, acme.cert-manager.io/http01-parentreffallback: "true"}',
        `{name: later, namespace: ${EDGE}}`,
        https('https', 'late.example.com', 'late-tls'),
      ) +
        '---\n' +
        listenerSet(
          'orphan',
          '{cert-manager.io/cluster-issuer: selfsigned}',
          '{name: going}',
          https('https', 'orphan.example.com', 'orphan-tls'),
        ) +
        '---\n' +
        listenerSet(
          'prompt',
          '{cert-manager.io/cluster-issuer: selfsigned}',
          '{name: edge-gw}',
          https('https', 'prompt.example.com', 'prompt-tls'),
        ),
    );
    // The three were queued together: once the one with a live Gateway has its Certificate, the others were
    // seen and left alone.
    await eventually(() => shims.certificate('prompt-tls'), 'Certificate prompt-tls', 20_000, 50);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(await shims.certificate('late-tls'), undefined);
    assert.equal(await shims.certificate('orphan-tls'), undefined);

    await shims.apply(gateway('later', '{}', EDGE));
    const late = await eventually(() => shims.certificate('late-tls'), 'Certificate late-tls', 20_000, 50);
    // With the fallback, the HTTP-01 solver's route attaches to the Gateway, in its namespace.
    assert.deepEqual(late.metadata?.annotations, {
      'acme.cert-manager.io/http01-parentrefkind': 'Gateway',
      'acme.cert-manager.io/http01-parentrefname': 'later',
      'acme.cert-manager.io/http01-parentrefnamespace': EDGE,
    });
    // Without it, to the ListenerSet, and the Gateway's namespace goes.
    await kubectl.ok(
      'annotate',
      'listenerset',
      'late',
      '-n',
      NS,
      'acme.cert-manager.io/http01-parentreffallback-',
    );
    await eventually(
      async () =>
        JSON.stringify((await shims.certificate('late-tls'))?.metadata?.annotations) ===
        JSON.stringify({
          'acme.cert-manager.io/http01-parentrefkind': 'ListenerSet',
          'acme.cert-manager.io/http01-parentrefname': 'late',
        }),
      'late-tls pointing at the ListenerSet',
      20_000,
      50,
    );

    await kubectl.ok(
      'patch',
      'gateway',
      'going',
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    );
  });
});
