import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { INJECTABLES, type InjectableName, stripTarget } from './injectables.ts';

const injectable = (name: InjectableName) => INJECTABLES.find((i) => i.name === name)!;

const validating = (annotations?: Record<string, string>) =>
  ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: {
      name: 'hooks',
      uid: 'u',
      resourceVersion: '7',
      labels: { app: 'x' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{…}', ...annotations },
      managedFields: [{ manager: 'kubectl' }],
    },
    webhooks: [
      { name: 'a.example.com', clientConfig: { url: 'https://a', caBundle: 'QQ==' }, rules: [{}] },
      { name: 'b.example.com', clientConfig: { service: { name: 'b', namespace: 'n' } }, rules: [{}] },
    ],
  }) as KubeObject;

describe('injectables', () => {
  it('keeps of a target in the cache its name, version and source annotations alone', () => {
    assert.deepEqual(stripTarget(validating()), {
      metadata: { name: 'hooks', uid: 'u', resourceVersion: '7' },
    });
    assert.deepEqual(stripTarget(validating({ 'cert-manager.io/inject-ca-from': 'ns/c' })), {
      metadata: {
        name: 'hooks',
        uid: 'u',
        resourceVersion: '7',
        annotations: { 'cert-manager.io/inject-ca-from': 'ns/c' },
      },
    });
  });

  it('finds each webhook’s bundle', () => {
    assert.deepEqual(injectable('validatingwebhookconfiguration').bundles(validating()), ['QQ==', undefined]);
  });

  it('applies the caBundle of every webhook, keyed by name, and nothing else', () => {
    const config = injectable('mutatingwebhookconfiguration').applyConfiguration(validating(), ['X', 'Y']);
    assert.deepEqual(config, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'hooks' },
      webhooks: [
        { name: 'a.example.com', clientConfig: { caBundle: 'X' } },
        { name: 'b.example.com', clientConfig: { caBundle: 'Y' } },
      ],
    });
  });

  it('puts a bundle in a CRD only when it converts through a webhook', () => {
    const crd = injectable('customresourcedefinition');
    const annotations = { 'cert-manager.io/inject-ca-from': 'ns/c' };
    const none = {
      metadata: { name: 'x.example.com', annotations },
      spec: { conversion: { strategy: 'None' } },
    };
    assert.deepEqual(crd.bundles(none), []);
    const webhook = {
      metadata: { name: 'x.example.com', annotations },
      spec: { versions: [{}], conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: 'u' } } } },
    };
    assert.deepEqual(crd.bundles(webhook), [undefined]);
    assert.deepEqual((crd.applyConfiguration(webhook, ['Z']) as Record<string, any>).spec, {
      conversion: { strategy: 'Webhook', webhook: { clientConfig: { caBundle: 'Z' } } },
    });
  });

  it('puts an APIService’s bundle in spec.caBundle', () => {
    const api = injectable('apiservice');
    const obj = {
      metadata: { name: 'v1.x', annotations: { 'cert-manager.io/inject-apiserver-ca': 'true' } },
      spec: { caBundle: 'Q' },
    };
    assert.deepEqual(api.bundles(obj), ['Q']);
    assert.deepEqual((api.applyConfiguration(obj, ['R']) as Record<string, any>).spec, { caBundle: 'R' });
  });
});
