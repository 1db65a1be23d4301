import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Certificate } from '../../api/types.ts';
import {
  aggregate,
  buildCertificate,
  duplicateSecretNameErrors,
  isControlledBy,
  needsUpdate,
  secretHosts,
  secretNameUsedIn,
} from './build.ts';
import {
  type Gateway,
  type Ingress,
  type IngressTLS,
  leanGatewayTransform,
  leanIngressTransform,
} from './ingress-like.ts';
import { DEFAULT_SHIM_OPTIONS } from './options.ts';

const ingress = (tls: IngressTLS[], annotations = {}): Ingress => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: {
    name: 'web',
    namespace: 'apps',
    uid: 'ingress-uid',
    labels: { app: 'web', 'applyset.kubernetes.io/part-of': 'applyset-xyz' },
    annotations: { 'cert-manager.io/issuer': 'ca', ...annotations },
  },
  spec: { tls },
});

const gateway = (listeners: NonNullable<Gateway['spec']>['listeners']): Gateway => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: {
    name: 'gw',
    namespace: 'apps',
    uid: 'gateway-uid',
    annotations: { 'cert-manager.io/issuer': 'ca' },
  },
  spec: { listeners },
});

const issuer = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' };

function hostsOf(kind: 'Ingress' | 'Gateway', obj: Ingress | Gateway, options = DEFAULT_SHIM_OPTIONS) {
  const skipped: string[] = [];
  const hosts = secretHosts(kind, obj, options, (message) => skipped.push(message));
  return { hosts: Object.fromEntries(hosts), skipped };
}

describe('secretHosts: one Certificate per Secret', () => {
  it('Ingress: each TLS entry with hosts and a secretName; others skipped with a BadConfig message', () => {
    const { hosts, skipped } = hostsOf(
      'Ingress',
      ingress([
        { hosts: ['web.example.com', '10.0.0.1'], secretName: 'web-tls' },
        { hosts: [], secretName: 'empty-tls' },
        { hosts: ['api.example.com'] },
        {},
      ]),
    );
    assert.deepEqual(hosts, { 'web-tls': ['web.example.com', '10.0.0.1'] });
    assert.deepEqual(skipped, [
      'Skipped a TLS block: spec.tls[1].hosts: Required value',
      'Skipped a TLS block: spec.tls[2].secretName: Required value',
      'Skipped a TLS block: [spec.tls[3].hosts: Required value, spec.tls[3].secretName: Required value]',
    ]);
  });

  it('Ingress: a secretName in two entries is refused as a whole, naming both places', () => {
    const errors = duplicateSecretNameErrors(
      ingress([
        { hosts: ['a.example.com'], secretName: 'shared' },
        { hosts: ['b.example.com'], secretName: 'other' },
        { hosts: ['c.example.com'], secretName: 'shared' },
      ]),
    );
    assert.equal(
      aggregate(errors),
      'spec.tls[0].secretName: Invalid value: "shared": this secret name must only appear in a single TLS entry but is also used in spec.tls[2].secretName',
    );
    assert.deepEqual(duplicateSecretNameErrors(ingress([{ hosts: ['a'], secretName: 'one' }])), []);
  });

  it('Gateway: HTTPS and TLS listeners in Terminate mode, hosts of one Secret gathered; others skipped', () => {
    const tls = (name: string, extra = {}) => ({ mode: 'Terminate', certificateRefs: [{ name, ...extra }] });
    const { hosts, skipped } = hostsOf(
      'Gateway',
      gateway([
        { name: 'http', protocol: 'HTTP', hostname: 'plain.example.com' },
        { name: 'a', protocol: 'HTTPS', hostname: 'a.example.com', tls: tls('shared') },
        { name: 'b', protocol: 'TLS', hostname: 'b.example.com', tls: tls('shared') },
        { name: 'pass', protocol: 'TLS', hostname: 'p.example.com', tls: { mode: 'Passthrough' } },
        { name: 'nohost', protocol: 'HTTPS', tls: tls('x') },
        { name: 'notls', protocol: 'HTTPS', hostname: 'n.example.com' },
        { name: 'cm', protocol: 'HTTPS', hostname: 'c.example.com', tls: tls('cm', { kind: 'ConfigMap' }) },
        {
          name: 'far',
          protocol: 'HTTPS',
          hostname: 'f.example.com',
          tls: tls('far', { namespace: 'other' }),
        },
        {
          name: 'nomode',
          protocol: 'HTTPS',
          hostname: 'm.example.com',
          tls: { certificateRefs: [{ name: 'm' }] },
        },
        { name: 'quic', protocol: 'QUIC', hostname: 'q.example.com', tls: tls('quic') },
      ]),
    );
    assert.deepEqual(hosts, { shared: ['a.example.com', 'b.example.com'] });
    assert.deepEqual(skipped, [
      'Skipped a listener block: spec.listeners[4].hostname: Required value: the hostname cannot be empty',
      'Skipped a listener block: spec.listeners[5].tls: Required value: the TLS block cannot be empty',
      'Skipped a listener block: spec.listeners[6].tls.certificateRef[0].kind: Unsupported value: "ConfigMap": supported values: "Secret", ""',
      'Skipped a listener block: spec.listeners[7].tls.certificateRef[0].namespace: Invalid value: "other": cross-namespace secret references are not allowed in listeners',
      'Skipped a listener block: spec.listeners[8].tls.mode: Required value: the mode field is required',
    ]);
    // --gateway-api-extra-protocols adds protocols; cert-manager.io/ignore-tls-listeners drops listeners by name.
    const more = hostsOf(
      'Gateway',
      {
        ...gateway([
          { name: 'quic', protocol: 'QUIC', hostname: 'q.example.com', tls: tls('quic') },
          { name: 'a', protocol: 'HTTPS', hostname: 'a.example.com', tls: tls('a') },
        ]),
        metadata: { name: 'gw', annotations: { 'cert-manager.io/ignore-tls-listeners': 'x, a' } },
      },
      { ...DEFAULT_SHIM_OPTIONS, gatewayAPIExtraProtocols: ['QUIC'] },
    );
    assert.deepEqual(more.hosts, { quic: ['q.example.com'] });
  });
});

describe('buildCertificate', () => {
  it('names it as the Secret, labels it as the object (not its applyset), makes the object its controller', () => {
    const obj = ingress([], {
      'cert-manager.io/duration': '720h',
      'acme.cert-manager.io/http01-edit-in-place': 'true',
    });
    const certificate = buildCertificate(
      { kind: 'Ingress', obj, issuer, extraAnnotations: { 'example.com/team': 'web' } },
      'web-tls',
      ['web.example.com', '10.0.0.1', 'web.example.com'],
    );
    assert.deepEqual(certificate, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: {
        name: 'web-tls',
        namespace: 'apps',
        labels: { app: 'web' },
        annotations: {
          'example.com/team': 'web',
          'acme.cert-manager.io/http01-override-ingress-name': 'web',
          'cert-manager.io/issue-temporary-certificate': 'true',
        },
        ownerReferences: [
          {
            apiVersion: 'networking.k8s.io/v1',
            kind: 'Ingress',
            name: 'web',
            uid: 'ingress-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        secretName: 'web-tls',
        issuerRef: issuer,
        usages: ['digital signature', 'key encipherment'],
        dnsNames: ['web.example.com'],
        ipAddresses: ['10.0.0.1'],
        duration: '720h0m0s',
      },
    });
    assert.equal(isControlledBy(certificate, obj), true);
    assert.equal(isControlledBy(certificate, { ...obj, metadata: { ...obj.metadata, uid: 'other' } }), false);
  });

  it('needsUpdate: what cert-manager compares, and only that', () => {
    const obj = ingress([]);
    const wanted = buildCertificate({ kind: 'Ingress', obj, issuer }, 'web-tls', ['web.example.com']);
    const existing = (change: (c: Certificate) => void) => {
      const copy = structuredClone(wanted);
      change(copy);
      return copy;
    };
    assert.equal(
      needsUpdate(
        existing(() => {}),
        wanted,
      ),
      false,
    );
    // The same duration spelt otherwise is the same duration.
    const withDuration = buildCertificate(
      { kind: 'Ingress', obj: ingress([], { 'cert-manager.io/duration': '24h' }), issuer },
      'web-tls',
      ['web.example.com'],
    );
    assert.equal(
      needsUpdate(
        existing((c) => (c.spec.duration = '24h')),
        withDuration,
      ),
      false,
    );
    for (const [what, change] of [
      ['dnsNames order', (c: Certificate) => (c.spec.dnsNames = ['other.example.com'])],
      ['labels', (c: Certificate) => (c.metadata!.labels = { app: 'old' })],
      ['issuer kind', (c: Certificate) => (c.spec.issuerRef.kind = 'ClusterIssuer')],
      ['commonName', (c: Certificate) => (c.spec.commonName = 'x')],
      ['revisionHistoryLimit', (c: Certificate) => (c.spec.revisionHistoryLimit = 2)],
      ['privateKey size', (c: Certificate) => (c.spec.privateKey = { size: 4096 })],
      ['renewBefore', (c: Certificate) => (c.spec.renewBefore = '1h')],
    ] as const) {
      assert.equal(needsUpdate(existing(change), wanted), true, what);
    }
    // Not compared by cert-manager: the issuer's group, usages.
    assert.equal(
      needsUpdate(
        existing((c) => (c.spec.issuerRef.group = 'other.io')),
        wanted,
      ),
      false,
    );
    assert.equal(
      needsUpdate(
        existing((c) => (c.spec.usages = ['server auth'])),
        wanted,
      ),
      false,
    );
    // An Ed25519 key's size is not compared.
    const ed = (size: number) => (c: Certificate) => (c.spec.privateKey = { algorithm: 'Ed25519', size });
    assert.equal(needsUpdate(existing(ed(1)), existing(ed(2))), false);
  });

  it('secretNameUsedIn: whether a TLS entry or listener still names the Secret', () => {
    const obj = ingress([{ hosts: ['a'], secretName: 'a-tls' }]);
    assert.equal(secretNameUsedIn('Ingress', obj, 'a-tls'), true);
    assert.equal(secretNameUsedIn('Ingress', obj, 'b-tls'), false);
    const gw = gateway([
      {
        name: 'a',
        protocol: 'HTTPS',
        hostname: 'a',
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'g' }] },
      },
    ]);
    assert.equal(secretNameUsedIn('Gateway', gw, 'g'), true);
    assert.equal(secretNameUsedIn('Gateway', gw, 'a-tls'), false);
  });
});

describe('what the caches keep', () => {
  const options = {
    autoCertificateAnnotations: ['kubernetes.io/tls-acme'],
    extraCertificateAnnotations: ['x/team'],
  };

  it('an Ingress that asks for nothing: its identity alone', () => {
    const kept = leanIngressTransform(options)({
      metadata: {
        name: 'plain',
        namespace: 'apps',
        uid: 'u',
        resourceVersion: '7',
        labels: { app: 'plain' },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"copy"}' },
        managedFields: [{ manager: 'kubectl' }],
      },
      spec: {
        rules: [{ host: 'plain.example.com' }],
        tls: [{ hosts: ['plain.example.com'], secretName: 's' }],
      },
      status: { loadBalancer: {} },
    } as never);
    assert.deepEqual(kept, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'plain', namespace: 'apps', uid: 'u', resourceVersion: '7' },
    });
  });

  it('an annotated Ingress: labels, the annotations the shim reads, spec.tls and deletion', () => {
    const kept = leanIngressTransform(options)({
      metadata: {
        name: 'web',
        namespace: 'apps',
        uid: 'u',
        resourceVersion: '8',
        deletionTimestamp: '2026-01-01T00:00:00Z',
        finalizers: ['example.com/keep', 'foregroundDeletion'],
        labels: { app: 'web' },
        annotations: {
          'kubernetes.io/tls-acme': 'true',
          'cert-manager.io/duration': '24h',
          'x/team': 'web',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
        },
      },
      spec: {
        rules: [{ host: 'web.example.com' }],
        tls: [{ hosts: ['web.example.com'], secretName: 'web-tls' }],
      },
      status: {},
    } as never);
    assert.deepEqual(kept, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: {
        name: 'web',
        namespace: 'apps',
        uid: 'u',
        resourceVersion: '8',
        deletionTimestamp: '2026-01-01T00:00:00Z',
        finalizers: ['foregroundDeletion'],
        labels: { app: 'web' },
        annotations: { 'kubernetes.io/tls-acme': 'true', 'cert-manager.io/duration': '24h', 'x/team': 'web' },
      },
      spec: { tls: [{ hosts: ['web.example.com'], secretName: 'web-tls' }] },
    });
  });

  it('a Gateway: each listener’s name, hostname, protocol and TLS; the auto annotations do not count', () => {
    const transform = leanGatewayTransform(options);
    const listeners = [
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        hostname: 'gw.example.com',
        allowedRoutes: { namespaces: { from: 'All' } },
        tls: {
          mode: 'Terminate',
          certificateRefs: [{ group: '', kind: 'Secret', name: 'gw-tls' }],
          options: {},
        },
      },
    ];
    assert.deepEqual(
      transform({
        metadata: { name: 'gw', uid: 'u', annotations: { 'cert-manager.io/cluster-issuer': 'ca' } },
        spec: { gatewayClassName: 'c', listeners },
      } as never),
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: {
          name: 'gw',
          namespace: undefined,
          uid: 'u',
          resourceVersion: undefined,
          annotations: { 'cert-manager.io/cluster-issuer': 'ca' },
        },
        spec: {
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              hostname: 'gw.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'gw-tls' }] },
            },
          ],
        },
      },
    );
    assert.equal(
      (
        transform({
          metadata: { name: 'gw', annotations: { 'kubernetes.io/tls-acme': 'true' } },
          spec: { listeners },
        } as never) as Gateway
      ).spec,
      undefined,
    );
  });
});
