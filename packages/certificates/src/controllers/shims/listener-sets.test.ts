import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCertificate, needsUpdate, secretHosts, secretNameUsedIn } from './build.ts';
import { gatewayApiNeeds } from './gateway-api.ts';
import {
  type Gateway,
  type GatewayListener,
  leanGatewayTransform,
  leanListenerSetTransform,
  type ListenerSet,
  type ParentGatewayReference,
} from './ingress-like.ts';
import { parentGatewayKey, withGatewayAnnotations } from './listener-sets.ts';
import { DEFAULT_SHIM_OPTIONS, shimFieldManager } from './options.ts';

const https = (name: string, hostname: string | undefined, secret: string): GatewayListener => ({
  name,
  protocol: 'HTTPS',
  ...(hostname === undefined ? {} : { hostname }),
  tls: { mode: 'Terminate', certificateRefs: [{ name: secret }] },
});

const listenerSet = (
  listeners: GatewayListener[],
  annotations: Record<string, string> = { 'cert-manager.io/cluster-issuer': 'ca' },
  parentRef: ParentGatewayReference = { name: 'edge' },
): ListenerSet => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'ListenerSet',
  metadata: { name: 'team-a', namespace: 'apps', uid: 'ls-uid', labels: { team: 'a' }, annotations },
  spec: { parentRef, listeners },
});

const gateway = (annotations?: Record<string, string>): Gateway => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'edge', namespace: 'apps', uid: 'gw-uid', ...(annotations ? { annotations } : {}) },
});

const issuer = { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' };

function hostsOf(obj: ListenerSet) {
  const skipped: string[] = [];
  const hosts = secretHosts('ListenerSet', obj, DEFAULT_SHIM_OPTIONS, (message) => skipped.push(message));
  return { hosts: Object.fromEntries(hosts), skipped };
}

describe('ListenerSet listeners, read as a Gateway’s', () => {
  it('one Certificate per Secret of its TLS listeners; ignored, passthrough, plain and bad ones left out', () => {
    const { hosts, skipped } = hostsOf(
      listenerSet(
        [
          https('a', 'a.example.com', 'a-tls'),
          https('www', 'www.a.example.com', 'a-tls'),
          https('skip', 'skip.example.com', 'skip-tls'),
          { name: 'pt', protocol: 'TLS', hostname: 'pt.example.com', tls: { mode: 'Passthrough' } },
          { name: 'plain', protocol: 'HTTP', hostname: 'plain.example.com' },
          https('nohost', undefined, 'nohost-tls'),
          {
            ...https('elsewhere', 'x.example.com', 'x-tls'),
            tls: { mode: 'Terminate', certificateRefs: [{ name: 'x-tls', namespace: 'other' }] },
          },
        ],
        { 'cert-manager.io/cluster-issuer': 'ca', 'cert-manager.io/ignore-tls-listeners': ' skip ,none' },
      ),
    );
    assert.deepEqual(hosts, { 'a-tls': ['a.example.com', 'www.a.example.com'] });
    assert.deepEqual(skipped, [
      'Skipped a listener block: spec.listeners[5].hostname: Required value: the hostname cannot be empty',
      'Skipped a listener block: spec.listeners[6].tls.certificateRef[0].namespace: Invalid value: "other": cross-namespace secret references are not allowed in listeners',
    ]);
  });

  it('the Certificate: controlled by the ListenerSet, the HTTP-01 route attached to it, written as listenerset', () => {
    const obj = listenerSet([https('a', 'a.example.com', 'a-tls')]);
    const certificate = buildCertificate({ kind: 'ListenerSet', obj, issuer }, 'a-tls', ['a.example.com']);
    assert.deepEqual(certificate.metadata, {
      name: 'a-tls',
      namespace: 'apps',
      labels: { team: 'a' },
      annotations: {
        'acme.cert-manager.io/http01-parentrefkind': 'ListenerSet',
        'acme.cert-manager.io/http01-parentrefname': 'team-a',
      },
      ownerReferences: [
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'ListenerSet',
          name: 'team-a',
          uid: 'ls-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    assert.equal(shimFieldManager('ListenerSet'), 'cert-manager-listenerset');
    assert.ok(secretNameUsedIn('ListenerSet', obj, 'a-tls'));
    assert.ok(!secretNameUsedIn('ListenerSet', obj, 'b-tls'));
  });

  it('http01-parentreffallback (a Go boolean) attaches the route to the Gateway, in its namespace', () => {
    const annotationsFor = (
      annotations: Record<string, string>,
      parentRef: ParentGatewayReference = { name: 'edge' },
    ) =>
      buildCertificate(
        {
          kind: 'ListenerSet',
          obj: listenerSet([], { 'cert-manager.io/cluster-issuer': 'ca', ...annotations }, parentRef),
          issuer,
        },
        's',
        ['a.example.com'],
      ).metadata?.annotations;
    const fallback = 'acme.cert-manager.io/http01-parentreffallback';
    assert.deepEqual(annotationsFor({ [fallback]: 'T' }), {
      'acme.cert-manager.io/http01-parentrefkind': 'Gateway',
      'acme.cert-manager.io/http01-parentrefname': 'edge',
      'acme.cert-manager.io/http01-parentrefnamespace': 'apps',
    });
    assert.deepEqual(annotationsFor({ [fallback]: 'true' }, { name: 'edge', namespace: 'infra' }), {
      'acme.cert-manager.io/http01-parentrefkind': 'Gateway',
      'acme.cert-manager.io/http01-parentrefname': 'edge',
      'acme.cert-manager.io/http01-parentrefnamespace': 'infra',
    });
    for (const off of ['false', 'yes', '']) {
      assert.deepEqual(annotationsFor({ [fallback]: off }), {
        'acme.cert-manager.io/http01-parentrefkind': 'ListenerSet',
        'acme.cert-manager.io/http01-parentrefname': 'team-a',
      });
    }
  });

  it('needsUpdate: a changed HTTP-01 parent reference rewrites the Certificate', () => {
    const obj = listenerSet([https('a', 'a.example.com', 'a-tls')]);
    const toListenerSet = buildCertificate({ kind: 'ListenerSet', obj, issuer }, 'a-tls', ['a.example.com']);
    const toGateway = buildCertificate(
      {
        kind: 'ListenerSet',
        obj: listenerSet(obj.spec!.listeners!, {
          'cert-manager.io/cluster-issuer': 'ca',
          'acme.cert-manager.io/http01-parentreffallback': 'true',
        }),
        issuer,
      },
      'a-tls',
      ['a.example.com'],
    );
    assert.ok(!needsUpdate(toListenerSet, structuredClone(toListenerSet)));
    assert.ok(needsUpdate(toGateway, toListenerSet));
    assert.ok(needsUpdate(toListenerSet, toGateway));
  });
});

describe('the parent Gateway', () => {
  it('parentGatewayKey: the parentRef’s namespace, else the ListenerSet’s; none without a name', () => {
    assert.equal(parentGatewayKey(listenerSet([])), 'apps/edge');
    assert.equal(parentGatewayKey(listenerSet([], {}, { name: 'edge', namespace: 'infra' })), 'infra/edge');
    assert.equal(parentGatewayKey(listenerSet([], {}, { name: 'edge', namespace: '' })), 'apps/edge');
    assert.equal(parentGatewayKey({ metadata: { name: 'stub', namespace: 'apps' } }), undefined);
  });

  it('withGatewayAnnotations: issuer or cluster-issuer only when the ListenerSet names neither; kind and group always', () => {
    const annotations = (own: Record<string, string>, parent?: Record<string, string>) =>
      withGatewayAnnotations(listenerSet([], own), gateway(parent)).metadata?.annotations;
    assert.deepEqual(annotations({}, { 'cert-manager.io/issuer': 'gw-ca', 'example.com/x': 'y' }), {
      'cert-manager.io/issuer': 'gw-ca',
    });
    assert.deepEqual(
      annotations(
        { 'cert-manager.io/cluster-issuer': 'mine' },
        {
          'cert-manager.io/issuer': 'gw-ca',
          'cert-manager.io/issuer-kind': 'External',
          'cert-manager.io/issuer-group': 'x.io',
        },
      ),
      {
        'cert-manager.io/cluster-issuer': 'mine',
        'cert-manager.io/issuer-kind': 'External',
        'cert-manager.io/issuer-group': 'x.io',
      },
    );
    // The Gateway's kind wins over the ListenerSet's own, as in cert-manager.
    assert.deepEqual(
      annotations(
        { 'cert-manager.io/issuer': 'mine', 'cert-manager.io/issuer-kind': 'Issuer' },
        { 'cert-manager.io/issuer-kind': 'ClusterIssuer' },
      ),
      { 'cert-manager.io/issuer': 'mine', 'cert-manager.io/issuer-kind': 'ClusterIssuer' },
    );
    const own = listenerSet([], { 'cert-manager.io/issuer': 'mine' });
    assert.equal(
      withGatewayAnnotations(own, gateway()),
      own,
      'a Gateway without annotations changes nothing',
    );
    withGatewayAnnotations(own, gateway({ 'cert-manager.io/issuer-kind': 'ClusterIssuer' }));
    assert.deepEqual(
      own.metadata?.annotations,
      { 'cert-manager.io/issuer': 'mine' },
      'the cached object is kept',
    );
  });
});

describe('what the caches keep for the listenerset controller', () => {
  const options = { autoCertificateAnnotations: ['kubernetes.io/tls-acme'], extraCertificateAnnotations: [] };

  it('a ListenerSet, annotated or not: parentRef and each listener’s name, hostname, protocol and TLS', () => {
    const kept = leanListenerSetTransform(options)({
      metadata: {
        name: 'team-a',
        namespace: 'apps',
        uid: 'u',
        resourceVersion: '3',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        managedFields: [{ manager: 'kubectl' }],
      },
      spec: {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'edge' },
        listeners: [{ ...https('a', 'a.example.com', 'a-tls'), port: 443, allowedRoutes: {} }],
      },
      status: { conditions: [], listeners: [] },
    } as never);
    assert.deepEqual(kept, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: 'team-a', namespace: 'apps', uid: 'u', resourceVersion: '3' },
      spec: {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'edge' },
        listeners: [https('a', 'a.example.com', 'a-tls')],
      },
    });
  });

  it('a Gateway that asks for nothing keeps what its ListenerSets inherit, and its deletion', () => {
    const kept = leanGatewayTransform(options)({
      metadata: {
        name: 'edge',
        namespace: 'apps',
        uid: 'u',
        resourceVersion: '9',
        deletionTimestamp: '2026-01-01T00:00:00Z',
        annotations: { 'cert-manager.io/issuer-kind': 'ClusterIssuer', 'cert-manager.io/duration': '1h' },
      },
      spec: { listeners: [https('a', 'a.example.com', 'a-tls')] },
    } as never);
    assert.deepEqual(kept, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: {
        name: 'edge',
        namespace: 'apps',
        uid: 'u',
        resourceVersion: '9',
        deletionTimestamp: '2026-01-01T00:00:00Z',
        annotations: { 'cert-manager.io/issuer-kind': 'ClusterIssuer' },
      },
    });
  });
});

describe('gatewayApiNeeds: what the start-up check asks the cluster for', () => {
  it('nothing without the Gateway API shims; ListenerSets with the listenerset controller', () => {
    assert.equal(gatewayApiNeeds(undefined), undefined);
    assert.equal(gatewayApiNeeds(new Set(['ingress-shim'])), undefined);
    assert.deepEqual(gatewayApiNeeds(new Set(['gateway-shim'])), { listenerSets: false });
    assert.deepEqual(gatewayApiNeeds(new Set(['gateway-shim', 'listenerset'])), { listenerSets: true });
    assert.deepEqual(gatewayApiNeeds(new Set(['listenerset'])), { listenerSets: true });
  });
});
