/**
 * The cainjector against the embedded API server, under deploy/cainjector-rbac.yaml's ServiceAccount, driven
 * as users drive it: kubectl applies annotated webhook configurations, CRDs and APIServices, the certificate
 * controller issues the Certificates they name, and their caBundle fields fill in. The proof that a bundle is
 * right is the API server itself: it calls a webhook served with the Certificate's key pair, over TLS verified
 * against the injected bundle, before and after the Certificate's key rotates.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { X509Certificate } from 'node:crypto';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins, KubeClient, loadKubeconfig, silentLogger } from '@certkit/runtime';
import { startWebhookServer, type TestWebhookServer } from '@certkit/testenv/admission/webhook-server';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { testServiceAccountTokens } from '@certkit/testenv/apiserver/service-account-tokens';
import { eventually } from '@certkit/testenv/eventually';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import type { Certificate } from '../api/types.ts';
import { installCrds, type RunningController, startCertificateController } from '../controller.ts';
import { setCondition } from '../controllers/conditions.ts';
import { certificatesRef } from '../controllers/refs.ts';
import { controllerIdentity } from '../identity/controller-identity.ts';
import { decodePemBlocks } from '../pki/pem.ts';
import { CAINJECTOR_FIELD_MANAGER, type RunningCAInjector, startCAInjector } from './cainjector.ts';
import { CAINJECTOR_RBAC_YAML } from './rbac-manifest.ts';

const NS = 'inject';

let server: TestServer;
let admin: KubeClient;
let injectorClient: KubeClient;
let kubectl: Kubectl;
let controller: RunningController;
let injector: RunningCAInjector;
let webhook: TestWebhookServer;
const logs: Record<string, unknown>[] = [];

type Secret = KubeObject & { data?: Record<string, string> };
type Loose = Record<string, any>;

async function apply(yaml: string): Promise<void> {
  await kubectl.ok('apply', '-f', await kubectl.manifest(yaml));
}

/** The object as kubectl prints it (-o json). */
async function getJson(...args: string[]): Promise<Loose> {
  return JSON.parse(await kubectl.ok('get', ...args, '-o', 'json', '--show-managed-fields')) as Loose;
}

const secret = (name: string) => admin.resource<Secret>(builtins.secrets).get(NS, name);

/** The Secret once the Certificate has been issued into it (its ca.crt and key pair). */
async function issued(secretName: string, notCert?: string): Promise<Secret> {
  return eventually(
    async () => {
      try {
        const s = await secret(secretName);
        return s.data?.['tls.crt'] && s.data['tls.crt'] !== notCert ? s : undefined;
      } catch {
        return undefined;
      }
    },
    `Secret ${secretName} issued${notCert ? ' anew' : ''}`,
    30_000,
    50,
  );
}

const pem = (b64: string) => Buffer.from(b64, 'base64').toString();
/** The certificates of a base64 PEM bundle, as their base64 DER. */
const certificatesOf = (bundle: string | undefined) =>
  bundle ? decodePemBlocks(pem(bundle)).map((b) => b.der.toString('base64')) : [];
const derOf = (pemB64: string) => new X509Certificate(pem(pemB64)).raw.toString('base64');

/** Asks the controller to issue the Certificate again now, as `certkit renew` does. */
async function renew(name: string): Promise<void> {
  const certificates = admin.resource<Certificate>(certificatesRef);
  const cert = await certificates.get(NS, name);
  const conditions = setCondition(
    cert.status?.conditions,
    { type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'renewed by the test' },
    new Date(),
  );
  await certificates.update({ ...cert, status: { ...cert.status, conditions } }, { subresource: 'status' });
}

const webhookConfiguration = (name: string, annotations: string, url: string, extra = '') => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ${name}
  annotations:
${annotations}
webhooks:
- name: ${name}.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig:
    url: ${url}
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: ${NS}}
  rules:
  - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
${extra}`;

/** A ConfigMap create, through every webhook configured for the namespace: kubectl's exit and message. */
async function createConfigMap(name: string) {
  const r = await kubectl.run('create', 'configmap', name, '-n', NS);
  return { code: r.code, text: `${r.stdout}${r.stderr}` };
}

before(async () => {
  if (kubectlSkip) return;
  server = await startTestServer({ serviceAccountTokens: testServiceAccountTokens() });
  admin = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  kubectl = kubectlFor({ ...process.env, KUBECONFIG: server.kubeconfigPath }, server.dataDir);
  await installCrds(admin);
  await eventually(
    async () => (await server.fetch('GET', '/apis/cert-manager.io/v1/certificates')).status === 200,
    'cert-manager.io served',
    30_000,
  );
  await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
  controller = startCertificateController(admin, { metricsBindAddress: '0', log: silentLogger });
  // The cainjector under its own identity: a permission deploy/cainjector-rbac.yaml lacks fails a test.
  const identity = await controllerIdentity(admin, CAINJECTOR_RBAC_YAML);
  injectorClient = new KubeClient({ ...identity.config, qps: -1 });
  injector = startCAInjector(injectorClient, {
    metricsBindAddress: '0',
    log: (entry) => logs.push(entry as Record<string, unknown>),
  });
  await apply(`
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: selfsigned, namespace: ${NS}}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: webhook-ca, namespace: ${NS}}
spec:
  secretName: webhook-ca-tls
  commonName: webhook-ca
  isCA: true
  privateKey: {algorithm: ECDSA, rotationPolicy: Always}
  issuerRef: {name: selfsigned}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: webhook-ca, namespace: ${NS}}
spec: {ca: {secretName: webhook-ca-tls}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: webhook-serving, namespace: ${NS}}
spec:
  secretName: webhook-serving-tls
  commonName: webhook
  ipAddresses: [127.0.0.1]
  privateKey: {algorithm: ECDSA, rotationPolicy: Always}
  issuerRef: {name: webhook-ca}
`);
  const tls = await issued('webhook-serving-tls');
  webhook = await startWebhookServer(
    (review) =>
      review.request.name?.startsWith('deny-')
        ? { allowed: false, status: { code: 403, message: 'refused by the webhook the cainjector trusted' } }
        : { allowed: true },
    { serving: { certPem: pem(tls.data!['tls.crt']!), keyPem: pem(tls.data!['tls.key']!) } },
  );
});

after(async () => {
  if (kubectlSkip) return;
  await injector?.stop();
  await controller?.stop();
  await webhook?.close();
  injectorClient?.close();
  admin?.close();
  await server?.close();
});

describe('cainjector: inject-ca-from a Certificate', { skip: kubectlSkip }, () => {
  let bundleBefore: string;

  it('fills every webhook of a ValidatingWebhookConfiguration with the Certificate’s CA', async () => {
    await apply(
      webhookConfiguration(
        'from-certificate',
        `    cert-manager.io/inject-ca-from: ${NS}/webhook-serving`,
        `${webhook.url}/validate`,
      ),
    );
    const tls = await secret('webhook-serving-tls');
    const config = await eventually(
      async () => {
        const c = await getJson('validatingwebhookconfiguration', 'from-certificate');
        return c.webhooks[0].clientConfig.caBundle ? c : undefined;
      },
      'a caBundle on from-certificate',
      20_000,
      50,
    );
    bundleBefore = config.webhooks[0].clientConfig.caBundle as string;
    assert.deepEqual(certificatesOf(bundleBefore), [derOf(tls.data!['ca.crt']!)]);
    // Written by server-side apply under cainjector's manager, which owns the caBundle and nothing else.
    const entry = (config.metadata.managedFields as Loose[] | undefined)?.find(
      (f) => f.manager === CAINJECTOR_FIELD_MANAGER,
    );
    assert.equal(entry?.operation, 'Apply');
    assert.match(JSON.stringify(entry?.fieldsV1), /caBundle/);
    assert.doesNotMatch(JSON.stringify(entry?.fieldsV1), /failurePolicy|rules/);
  });

  it('is a bundle the API server verifies the webhook with: it calls it and relays its answer', async () => {
    const denied = await eventually(
      async () => {
        const r = await createConfigMap(`deny-${Date.now()}`);
        return r.text.includes('refused by the webhook the cainjector trusted') ? r : undefined;
      },
      'the API server to call the webhook over TLS and relay its refusal',
      20_000,
      200,
    );
    assert.notEqual(denied.code, 0);
    assert.equal((await createConfigMap('allowed-1')).code, 0);
    assert.ok(webhook.reviews.some((r) => r.request.name === 'allowed-1'));
  });

  it('follows a rotation of the CA: the new CA joins the bundle, the old stays', async () => {
    const old = await secret('webhook-serving-tls');
    const oldCa = await secret('webhook-ca-tls');
    // A new CA key and certificate, then a serving certificate signed by it (ca.crt: the new CA).
    await renew('webhook-ca');
    await issued('webhook-ca-tls', oldCa.data!['tls.crt']);
    await renew('webhook-serving');
    const rotated = await issued('webhook-serving-tls', old.data!['tls.crt']);
    assert.notEqual(rotated.data!['ca.crt'], old.data!['ca.crt']);
    const config = await eventually(
      async () => {
        const c = await getJson('validatingwebhookconfiguration', 'from-certificate');
        return certificatesOf(c.webhooks[0].clientConfig.caBundle).length === 2 ? c : undefined;
      },
      'the rotated CA merged into from-certificate’s bundle',
      20_000,
      50,
    );
    assert.deepEqual(certificatesOf(config.webhooks[0].clientConfig.caBundle), [
      ...certificatesOf(bundleBefore),
      derOf(rotated.data!['ca.crt']!),
    ]);
    // The webhook now serves its new certificate, which only the merged-in CA verifies.
    webhook.useServing({
      certPem: pem(rotated.data!['tls.crt']!),
      keyPem: pem(rotated.data!['tls.key']!),
    });
    const before = webhook.reviews.length;
    const created = await createConfigMap('allowed-after-rotation');
    assert.equal(created.code, 0, created.text);
    assert.ok(webhook.reviews.length > before, 'the webhook was called after the rotation');
  });
});

describe('cainjector: inject-ca-from-secret', { skip: kubectlSkip }, () => {
  const caSecret = (name: string, allow: boolean, ca: string) => `
apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  namespace: ${NS}
${allow ? '  annotations: {cert-manager.io/allow-direct-injection: "true"}' : ''}
data:
  ca.crt: ${ca}
`;

  it('injects a Secret that allows direct injection', async () => {
    const ca = (await secret('webhook-serving-tls')).data!['ca.crt']!;
    await apply(caSecret('allowed-ca', true, ca));
    await apply(
      webhookConfiguration(
        'from-secret',
        `    cert-manager.io/inject-ca-from-secret: ${NS}/allowed-ca`,
        `${webhook.url}/validate`,
      ),
    );
    await eventually(
      async () =>
        (await getJson('validatingwebhookconfiguration', 'from-secret')).webhooks[0].clientConfig.caBundle ===
        ca,
      'from-secret injected with allowed-ca’s ca.crt',
      20_000,
      50,
    );
  });

  it('refuses a Secret without cert-manager.io/allow-direct-injection, and says so in its log', async () => {
    const ca = (await secret('webhook-serving-tls')).data!['ca.crt']!;
    await apply(caSecret('not-allowed-ca', false, ca));
    await apply(
      webhookConfiguration(
        'from-unallowed-secret',
        `    cert-manager.io/inject-ca-from-secret: ${NS}/not-allowed-ca`,
        `${webhook.url}/validate`,
      ),
    );
    await eventually(
      () =>
        logs.some(
          (l) =>
            String(l.msg).includes('does not allow direct injection') &&
            l.target === 'ValidatingWebhookConfiguration/from-unallowed-secret',
        ),
      'the refusal logged',
      20_000,
      50,
    );
    const config = await getJson('validatingwebhookconfiguration', 'from-unallowed-secret');
    assert.equal(config.webhooks[0].clientConfig.caBundle, undefined);
    // Once the Secret allows it, its change alone brings the injection.
    await apply(caSecret('not-allowed-ca', true, ca));
    await eventually(
      async () =>
        (await getJson('validatingwebhookconfiguration', 'from-unallowed-secret')).webhooks[0].clientConfig
          .caBundle === ca,
      'from-unallowed-secret injected once allowed',
      20_000,
      50,
    );
  });
});

describe('cainjector: missing sources', { skip: kubectlSkip }, () => {
  it('logs a missing Certificate and Secret, keeps running, and injects once the Secret appears', async () => {
    await apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: missing-sources
  annotations: {cert-manager.io/inject-ca-from: ${NS}/no-such-certificate}
webhooks:
- name: missing.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://127.0.0.1:1/mutate"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [nothings]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: missing-secret
  annotations: {cert-manager.io/inject-ca-from-secret: ${NS}/later-ca}
webhooks:
- name: missing.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://127.0.0.1:1/validate"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [nothings]}]
`);
    await eventually(
      () =>
        logs.some(
          (l) =>
            String(l.msg).includes('unable to fetch the Certificate') &&
            l.target === 'MutatingWebhookConfiguration/missing-sources',
        ) &&
        logs.some(
          (l) =>
            String(l.msg).includes('unable to fetch the Secret') &&
            l.target === 'ValidatingWebhookConfiguration/missing-secret',
        ),
      'both missing sources logged',
      20_000,
      50,
    );
    const ca = (await secret('webhook-serving-tls')).data!['ca.crt']!;
    await admin.resource<Secret>(builtins.secrets).create(NS, {
      metadata: { name: 'later-ca', annotations: { 'cert-manager.io/allow-direct-injection': 'true' } },
      data: { 'ca.crt': ca },
    });
    await eventually(
      async () =>
        (await getJson('validatingwebhookconfiguration', 'missing-secret')).webhooks[0].clientConfig
          .caBundle === ca,
      'missing-secret injected once its Secret was created',
      20_000,
      50,
    );
    const mutating = await getJson('mutatingwebhookconfiguration', 'missing-sources');
    assert.equal(mutating.webhooks[0].clientConfig.caBundle, undefined);
  });

  it('logs a malformed annotation and injects nothing', async () => {
    await apply(
      webhookConfiguration(
        'malformed',
        `    cert-manager.io/inject-ca-from: no-namespace`,
        `${webhook.url}/x`,
      ),
    );
    await eventually(
      () =>
        logs.some(
          (l) => String(l.msg).includes('invalid') && l.target === 'ValidatingWebhookConfiguration/malformed',
        ),
      'the malformed annotation logged',
      20_000,
      50,
    );
  });
});

describe('cainjector: CRD conversion webhooks and APIServices', { skip: kubectlSkip }, () => {
  it('fills a CRD’s conversion webhook, and leaves one converting with None alone', async () => {
    const crd = (plural: string, conversion: string) => `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.inject.example.com
  annotations: {cert-manager.io/inject-ca-from: ${NS}/webhook-serving}
spec:
  group: inject.example.com
  scope: Namespaced
  names: {plural: ${plural}, singular: ${plural.slice(0, -1)}, kind: ${plural[0]!.toUpperCase()}${plural.slice(1, -1)}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
${conversion}`;
    await apply(
      crd(
        'widgets',
        `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "${webhook.url}/convert"}`,
      ),
    );
    await apply(crd('gadgets', ''));
    const ca = (await secret('webhook-serving-tls')).data!['ca.crt']!;
    const widgets = await eventually(
      async () => {
        const c = await getJson('crd', 'widgets.inject.example.com');
        return c.spec.conversion?.webhook?.clientConfig?.caBundle ? c : undefined;
      },
      'a caBundle on the widgets CRD’s conversion webhook',
      20_000,
      50,
    );
    assert.ok(certificatesOf(widgets.spec.conversion.webhook.clientConfig.caBundle).includes(derOf(ca)));
    assert.equal(widgets.spec.conversion.webhook.clientConfig.url, `${webhook.url}/convert`);
    const gadgets = await getJson('crd', 'gadgets.inject.example.com');
    assert.notEqual(gadgets.spec.conversion?.strategy, 'Webhook');
    assert.equal(gadgets.spec.conversion?.webhook, undefined);
  });

  it('fills an APIService’s caBundle, and the API server’s own CA with inject-apiserver-ca', async () => {
    await apply(`
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.from-certificate.example.com
  annotations: {cert-manager.io/inject-ca-from: ${NS}/webhook-serving}
spec:
  group: from-certificate.example.com
  version: v1
  groupPriorityMinimum: 100
  versionPriority: 10
  service: {name: api, namespace: ${NS}, port: 443}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.apiserver-ca.example.com
  annotations: {cert-manager.io/inject-apiserver-ca: "true"}
spec:
  group: apiserver-ca.example.com
  version: v1
  groupPriorityMinimum: 100
  versionPriority: 10
  service: {name: api, namespace: ${NS}, port: 443}
`);
    const ca = (await secret('webhook-serving-tls')).data!['ca.crt']!;
    await eventually(
      async () =>
        certificatesOf(
          (await getJson('apiservice', 'v1.from-certificate.example.com')).spec.caBundle,
        ).includes(derOf(ca)),
      'the Certificate’s CA in the APIService',
      20_000,
      50,
    );
    const serverCa = injectorClient.config.ca!;
    await eventually(
      async () =>
        certificatesOf((await getJson('apiservice', 'v1.apiserver-ca.example.com')).spec.caBundle).includes(
          derOf(Buffer.from(serverCa).toString('base64')),
        ),
      'the API server’s CA in the APIService',
      20_000,
      50,
    );
  });

  it('was refused nothing under deploy/cainjector-rbac.yaml', () => {
    const refused = logs.filter(
      (l) => /forbidden/i.test(JSON.stringify(l)) && !String(l.msg).includes('namespace'),
    );
    assert.deepEqual(refused, []);
  });
});
