/**
 * cert-manager's ingress-shim and gateway-shim against the embedded API server, driven as users drive them:
 * kubectl applies and annotates Ingresses and Gateways (the Gateway API v1.6.1 standard CRDs), and the
 * Certificates they ask for appear, follow their changes, become Ready from a CA Issuer or a SelfSigned
 * ClusterIssuer, and go with them through the API server's garbage collector. Events carry cert-manager's
 * reasons and messages.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, type KubeClient } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { eventually } from '@certkit/testenv/eventually';
import {
  readyStatus,
  type ShimCluster,
  type ShimTestCluster,
  startShimTestCluster,
} from '@certkit/testenv/controllers/shim-cluster';
import { type Kubectl, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { rootCa } from '@certkit/testenv/pki/ca';
import type { RunningController } from '../../controller.ts';
import { encodePrivateKey } from '../../pki/index.ts';
import { enabledControllers } from '../enabled-controllers.ts';
import { requireGatewayApi } from './gateway-api.ts';

const NS = 'shims';

let cluster: ShimTestCluster;
let admin: KubeClient;
let kubectl: Kubectl;
let controller: RunningController;
let withoutGatewayApi: unknown;

let shims: ShimCluster;
const certificate = (name: string) => shims.certificate(name);
const apply = (yaml: string) => shims.apply(yaml);
const eventAbout = (kind: string, name: string, reason: string, message?: string | RegExp) =>
  shims.eventAbout(kind, name, reason, message);
const ready = readyStatus;

const ingress = (name: string, annotations: string, tls: string) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: ${NS}
  annotations:
${annotations}
spec:
  ingressClassName: nginx
  rules:
  - host: ${name}.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: ${name}, port: {number: 80}}}}]}
  tls:
${tls}
`;

before(async () => {
  cluster = await startShimTestCluster(NS);
  ({ admin, kubectl } = cluster);
  shims = cluster;
  withoutGatewayApi = await requireGatewayApi(admin).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!kubectlSkip) await cluster.installGatewayApi('gateways');
  await requireGatewayApi(admin);

  const ca = await rootCa({ algorithm: 'ECDSA', size: 256 }, 365 * 24 * 3600_000);
  await admin.resource<Secret & KubeObject>(builtins.secrets).create(NS, {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'ca-key-pair', namespace: NS },
    data: {
      'tls.crt': Buffer.from(ca.certPem).toString('base64'),
      'tls.key': Buffer.from(encodePrivateKey(ca.key, 'PKCS8')).toString('base64'),
    },
  });
  controller = cluster.startController({
    controllers: enabledControllers(['*'], { gatewayAPI: true }),
    shims: {
      defaultIssuerName: 'selfsigned',
      defaultIssuerKind: 'ClusterIssuer',
      extraCertificateAnnotations: ['example.com/team'],
    },
  });
});

after(async () => {
  await cluster?.close();
});

describe('--enable-gateway-api on a cluster without the Gateway API', () => {
  it('refuses to start, in cert-manager’s words', () => {
    assert.ok(withoutGatewayApi instanceof Error, String(withoutGatewayApi));
    assert.match(
      withoutGatewayApi.message,
      /^the Gateway API CRDs do not seem to be present, but --enable-gateway-api is set to true\. Please install the gateway-api CRDs\. \(/,
    );
  });
});

describe('ingress-shim', { skip: kubectlSkip }, () => {
  before(async () => {
    await apply(`apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: ca, namespace: ${NS}}
spec: {ca: {secretName: ca-key-pair}}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: selfsigned}
spec: {selfSigned: {}}
`);
  });

  it('kubectl apply of an annotated Ingress: a Certificate per TLS Secret, every annotation mapped, Ready', async () => {
    await apply(
      ingress(
        'web',
        `    cert-manager.io/issuer: ca
    cert-manager.io/common-name: web.example.com
    cert-manager.io/duration: 720h
    cert-manager.io/renew-before: 240h
    cert-manager.io/usages: digital signature,key encipherment,server auth
    cert-manager.io/private-key-algorithm: ECDSA
    cert-manager.io/private-key-size: "384"
    cert-manager.io/revision-history-limit: "2"
    cert-manager.io/email-sans: web@example.com
    cert-manager.io/subject-organizations: '"Example, Inc."'
    acme.cert-manager.io/http01-ingress-class: nginx
    example.com/team: web
    example.com/not-copied: "x"`,
        `  - hosts: [web.example.com, www.example.com]
    secretName: web-tls
  - hosts: [api.example.com]
    secretName: api-tls`,
      ).replace(
        '  name: web\n',
        '  name: web\n  labels: {app: web, applyset.kubernetes.io/part-of: applyset-abc}\n',
      ),
    );
    const web = await eventually(() => certificate('web-tls'), 'Certificate web-tls', 20_000, 50);
    const ingressUid = JSON.parse(await kubectl.ok('get', 'ingress', 'web', '-n', NS, '-o', 'json')).metadata
      .uid;
    assert.deepEqual(web.metadata?.ownerReferences, [
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        name: 'web',
        uid: ingressUid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(web.metadata?.labels, { app: 'web' });
    assert.deepEqual(web.metadata?.annotations, {
      'example.com/team': 'web',
      'acme.cert-manager.io/http01-override-ingress-class': 'nginx',
    });
    assert.deepEqual(web.spec, {
      secretName: 'web-tls',
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      commonName: 'web.example.com',
      dnsNames: ['web.example.com', 'www.example.com'],
      emailAddresses: ['web@example.com'],
      subject: { organizations: ['Example, Inc.'] },
      duration: '720h0m0s',
      renewBefore: '240h0m0s',
      usages: ['digital signature', 'key encipherment', 'server auth'],
      revisionHistoryLimit: 2,
      privateKey: { algorithm: 'ECDSA', size: 384 },
    });
    const api = await eventually(() => certificate('api-tls'), 'Certificate api-tls', 20_000, 50);
    assert.deepEqual(api.spec.dnsNames, ['api.example.com']);
    assert.equal(api.spec.ipAddresses, undefined);

    const created = await eventAbout(
      'Ingress',
      'web',
      'CreateCertificate',
      'Successfully created Certificate "web-tls"',
    );
    assert.equal(created.type, 'Normal');
    assert.equal(created.source?.component, 'cert-manager-ingress-shim');
    await eventually(
      async () => ready(await certificate('web-tls')) === 'True',
      'web-tls Ready',
      30_000,
      100,
    );
    const secret = await admin.resource<Secret & KubeObject>(builtins.secrets).get(NS, 'web-tls');
    assert.ok(secret.data?.['tls.crt'], 'the issued Secret has a certificate');
    const issued = await kubectl.ok('get', 'certificate', 'web-tls', '-n', NS);
    assert.match(issued, /^web-tls\s+True\s+web-tls\s/m);
  });

  it('an annotation change updates the Certificate; a TLS entry removed deletes its Certificate', async () => {
    await kubectl.ok('annotate', '--overwrite', 'ingress', 'web', '-n', NS, 'cert-manager.io/duration=1440h');
    await eventually(
      async () => (await certificate('web-tls'))?.spec.duration === '1440h0m0s',
      'web-tls with the new duration',
      20_000,
      50,
    );
    await eventAbout('Ingress', 'web', 'UpdateCertificate', 'Successfully updated Certificate "web-tls"');
    await kubectl.ok('label', '--overwrite', 'ingress', 'web', '-n', NS, 'app=website');
    await eventually(
      async () => (await certificate('web-tls'))?.metadata?.labels?.app === 'website',
      'web-tls relabelled',
      20_000,
      50,
    );

    await kubectl.ok(
      'patch',
      'ingress',
      'web',
      '-n',
      NS,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/tls/1"}]',
    );
    await eventually(async () => (await certificate('api-tls')) === undefined, 'api-tls deleted', 20_000, 50);
    await eventAbout(
      'Ingress',
      'web',
      'DeleteCertificate',
      'Successfully deleted unrequired Certificate "api-tls"',
    );
    assert.ok(await certificate('web-tls'), 'web-tls stays');
  });

  it('a Certificate deleted by hand comes back; one the user wrote is left alone', async () => {
    const before = await certificate('web-tls');
    await kubectl.ok('delete', 'certificate', 'web-tls', '-n', NS);
    const again = await eventually(
      async () => {
        const c = await certificate('web-tls');
        return c && c.metadata?.uid !== before?.metadata?.uid ? c : undefined;
      },
      'web-tls created again',
      20_000,
      50,
    );
    assert.equal(again.spec.duration, '1440h0m0s');

    await apply(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: mine-tls, namespace: ${NS}}
spec: {secretName: mine-tls, dnsNames: [mine.example.com], issuerRef: {name: ca}}
`);
    await apply(
      ingress(
        'mine',
        '    cert-manager.io/cluster-issuer: selfsigned',
        '  - {hosts: [other.example.com], secretName: mine-tls}',
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const mine = await certificate('mine-tls');
    assert.deepEqual(mine?.spec.dnsNames, ['mine.example.com']);
    assert.equal(mine?.spec.issuerRef.name, 'ca');
    assert.equal(mine?.metadata?.ownerReferences, undefined);
  });

  it('kubernetes.io/tls-acme: "true" takes the --default-issuer-* issuer', async () => {
    await apply(
      ingress(
        'auto',
        '    kubernetes.io/tls-acme: "true"',
        '  - {hosts: [auto.example.com], secretName: auto-tls}',
      ),
    );
    const auto = await eventually(() => certificate('auto-tls'), 'Certificate auto-tls', 20_000, 50);
    assert.deepEqual(auto.spec.issuerRef, {
      name: 'selfsigned',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    await eventually(
      async () => ready(await certificate('auto-tls')) === 'True',
      'auto-tls Ready',
      30_000,
      100,
    );
    // "false" asks for nothing.
    await apply(
      ingress(
        'manual',
        '    kubernetes.io/tls-acme: "false"',
        '  - {hosts: [manual.example.com], secretName: manual-tls}',
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(await certificate('manual-tls'), undefined);
  });

  it('an Ingress that asks for no Certificate is not even reconciled', async () => {
    const reconciles = () =>
      controller.metrics
        .render()
        .split('\n')
        .filter(
          (line) =>
            line.startsWith('controller_runtime_reconcile_total{') &&
            line.includes('controller="ingress-shim"'),
        )
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    // Quiet first: the Certificates of the Ingresses above have stopped changing.
    let last = -1;
    await eventually(
      async () => {
        const now = reconciles();
        const quiet = now === last;
        last = now;
        await new Promise((resolve) => setTimeout(resolve, 700));
        return quiet;
      },
      'the ingress-shim quiet',
      30_000,
    );
    assert.ok(last > 0, 'the ingress-shim reconciled the Ingresses above');
    await apply(
      ingress(
        'plain',
        '    example.com/owner: web',
        '  - {hosts: [plain.example.com], secretName: plain-tls}',
      ),
    );
    await kubectl.ok('annotate', '--overwrite', 'ingress', 'plain', '-n', NS, 'example.com/owner=api');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(reconciles(), last);
    assert.equal(await certificate('plain-tls'), undefined);
    // Annotated later, it is.
    await kubectl.ok('annotate', 'ingress', 'plain', '-n', NS, 'cert-manager.io/issuer=ca');
    await eventually(() => certificate('plain-tls'), 'plain-tls once annotated', 20_000, 50);
    assert.ok(reconciles() > last);
  });

  it('bad annotations: a BadConfig Warning in cert-manager’s words, and no Certificate until fixed', async () => {
    await apply(
      ingress(
        'both',
        '    cert-manager.io/issuer: ca\n    cert-manager.io/cluster-issuer: selfsigned',
        '  - {hosts: [both.example.com], secretName: both-tls}',
      ),
    );
    const both = await eventAbout(
      'Ingress',
      'both',
      'BadConfig',
      'Could not determine issuer for ingress due to bad annotations: both "cert-manager.io/issuer" and "cert-manager.io/cluster-issuer" may not be set',
    );
    assert.equal(both.type, 'Warning');
    assert.equal(both.source?.component, 'cert-manager-ingress-shim');

    await apply(
      ingress(
        'twice',
        '    cert-manager.io/issuer: ca',
        '  - {hosts: [a.example.com], secretName: twice-tls}\n  - {hosts: [b.example.com], secretName: twice-tls}',
      ),
    );
    await eventAbout(
      'Ingress',
      'twice',
      'BadConfig',
      'spec.tls[0].secretName: Invalid value: "twice-tls": this secret name must only appear in a single TLS entry but is also used in spec.tls[1].secretName',
    );

    await apply(
      ingress(
        'partial',
        '    cert-manager.io/issuer: ca',
        '  - {secretName: nohosts-tls}\n  - {hosts: [partial.example.com], secretName: partial-tls}',
      ),
    );
    await eventAbout(
      'Ingress',
      'partial',
      'BadConfig',
      'Skipped a TLS block: spec.tls[0].hosts: Required value',
    );
    await eventually(() => certificate('partial-tls'), 'the usable entry’s Certificate', 20_000, 50);

    await apply(
      ingress(
        'soon',
        '    cert-manager.io/issuer: ca\n    cert-manager.io/duration: soon',
        '  - {hosts: [soon.example.com], secretName: soon-tls}',
      ),
    );
    await eventAbout(
      'Ingress',
      'soon',
      'BadConfig',
      'invalid ingress annotation "cert-manager.io/duration": time: invalid duration "soon"',
    );
    for (const name of ['both-tls', 'twice-tls', 'nohosts-tls', 'soon-tls'])
      assert.equal(await certificate(name), undefined, name);
    await kubectl.ok('annotate', '--overwrite', 'ingress', 'soon', '-n', NS, 'cert-manager.io/duration=48h');
    const soon = await eventually(
      () => certificate('soon-tls'),
      'soon-tls once the duration is fixed',
      20_000,
      50,
    );
    assert.equal(soon.spec.duration, '48h0m0s');
  });

  it('deleting the Ingress: the garbage collector deletes its Certificates', async () => {
    await kubectl.ok('delete', 'ingress', 'web', '-n', NS);
    await eventually(
      async () => (await certificate('web-tls')) === undefined,
      'web-tls collected',
      30_000,
      100,
    );
    // The user's Certificate is no Ingress's.
    await kubectl.ok('delete', 'ingress', 'mine', '-n', NS);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.ok(await certificate('mine-tls'));
  });
});

describe('gateway-shim', { skip: kubectlSkip }, () => {
  const gateway = (listeners: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: ${NS}
  annotations: {cert-manager.io/cluster-issuer: selfsigned, cert-manager.io/duration: 48h}
spec:
  gatewayClassName: example
  listeners:
${listeners}`;

  it('kubectl apply of an annotated Gateway: a Certificate per Secret its HTTPS listeners name, Ready', async () => {
    await apply(
      gateway(`  - {name: http, protocol: HTTP, port: 80, hostname: gw.example.com}
  - name: https
    protocol: HTTPS
    port: 443
    hostname: gw.example.com
    tls: {mode: Terminate, certificateRefs: [{name: gw-tls}]}
  - name: nohost
    protocol: HTTPS
    port: 8443
    tls: {mode: Terminate, certificateRefs: [{name: nohost-tls}]}`),
    );
    const gw = await eventually(() => certificate('gw-tls'), 'Certificate gw-tls', 20_000, 50);
    assert.equal(gw.metadata?.ownerReferences?.[0]?.kind, 'Gateway');
    assert.equal(gw.metadata?.ownerReferences?.[0]?.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.deepEqual(gw.metadata?.annotations, {
      'acme.cert-manager.io/http01-parentrefkind': 'Gateway',
      'acme.cert-manager.io/http01-parentrefname': 'gw',
    });
    assert.deepEqual(gw.spec.dnsNames, ['gw.example.com']);
    assert.equal(gw.spec.duration, '48h0m0s');
    const skipped = await eventAbout(
      'Gateway',
      'gw',
      'BadConfig',
      'Skipped a listener block: spec.listeners[2].hostname: Required value: the hostname cannot be empty',
    );
    assert.equal(skipped.source?.component, 'cert-manager-gateway-shim');
    await eventAbout('Gateway', 'gw', 'CreateCertificate', 'Successfully created Certificate "gw-tls"');
    await eventually(async () => ready(await certificate('gw-tls')) === 'True', 'gw-tls Ready', 30_000, 100);
    assert.equal(await certificate('nohost-tls'), undefined);
  });

  it('a second hostname on the same Secret updates it; deleting the Gateway collects it', async () => {
    await apply(
      gateway(`  - name: https
    protocol: HTTPS
    port: 443
    hostname: gw.example.com
    tls: {mode: Terminate, certificateRefs: [{name: gw-tls}]}
  - name: https-www
    protocol: HTTPS
    port: 443
    hostname: www.gw.example.com
    tls: {mode: Terminate, certificateRefs: [{name: gw-tls}]}`),
    );
    await eventually(
      async () =>
        (await certificate('gw-tls'))?.spec.dnsNames?.join() === 'gw.example.com,www.gw.example.com',
      'gw-tls with both hostnames',
      20_000,
      50,
    );
    await kubectl.ok('delete', 'gateway', 'gw', '-n', NS);
    await eventually(
      async () => (await certificate('gw-tls')) === undefined,
      'gw-tls collected',
      30_000,
      100,
    );
  });
});
