import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * CEL validation rules end to end, driven by kubectl: the Gateway API v1.6.1 standard CRDs installed, Gateways
 * and HTTPRoutes that break their rules refused with kube-apiserver's errors, valid ones stored; a CRD of our
 * own with a transition rule, and one with a rule that does not compile; cert-manager's Issuer rule.
 */

const GATEWAY_API = fileURLToPath(new URL('../../../../testenv/src/gateway-api/', import.meta.url));

let t: TestServer;
let kubectl: Kubectl;
let workDir: string;

before(async () => {
  if (kubectlSkip) return;
  t = await startTestServer();
  workDir = await mkdtemp(join(tmpdir(), 'certkit-cel-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
});
after(async () => {
  await t?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

function gateway(name: string, listeners: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: default}
spec:
  gatewayClassName: example
  listeners:
${listeners}`;
}

async function refused(yaml: string): Promise<string> {
  const r = await kubectl.run('apply', '-f', await kubectl.manifest(yaml));
  assert.notEqual(r.code, 0, `kubectl apply succeeded: ${r.stdout}`);
  return r.stderr;
}

describe('Gateway API standard CRDs', { skip: kubectlSkip }, () => {
  before(async () => {
    for (const crd of ['gatewayclasses', 'gateways', 'httproutes'])
      await kubectl.ok(
        'apply',
        '--server-side',
        '-f',
        join(GATEWAY_API, `gateway.networking.k8s.io_${crd}.yaml`),
      );
  });

  it('stores a valid Gateway and HTTPRoute', async () => {
    await kubectl.ok(
      'apply',
      '-f',
      await kubectl.manifest(
        gateway(
          'valid',
          `  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com"}
  - name: https
    protocol: HTTPS
    port: 443
    tls: {mode: Terminate, certificateRefs: [{name: cert}]}`,
        ),
      ),
    );
    await kubectl.ok(
      'apply',
      '-f',
      await kubectl.manifest(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: valid, namespace: default}
spec:
  parentRefs: [{name: valid}]
  hostnames: [www.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 8080}]
    timeouts: {request: 10s, backendRequest: 5s}`),
    );
    const listeners = JSON.parse(await kubectl.ok('get', 'gateway', 'valid', '-o', 'json')).spec.listeners;
    assert.equal(listeners.length, 2);
  });

  it('refuses TLS on an HTTP listener, at spec.listeners', async () => {
    const stderr = await refused(
      gateway(
        'http-tls',
        `  - {name: http, protocol: HTTP, port: 80, tls: {mode: Terminate, certificateRefs: [{name: c}]}}`,
      ),
    );
    assert.match(
      stderr,
      /The Gateway "http-tls" is invalid: spec\.listeners: Invalid value: "array": tls must not be specified for protocols \['HTTP', 'TCP', 'UDP'\]/,
    );
  });

  it('refuses an HTTPS listener in Passthrough mode and a TLS listener without TLS settings', async () => {
    const stderr = await refused(
      gateway(
        'modes',
        `  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Passthrough}}
  - {name: tls, protocol: TLS, port: 8443}`,
      ),
    );
    assert.match(stderr, /The Gateway "modes" is invalid: /);
    assert.match(
      stderr,
      /spec\.listeners: Invalid value: "array": tls mode must be Terminate for protocol HTTPS/,
    );
    assert.match(stderr, /spec\.listeners: Invalid value: "array": tls mode must be set for protocol TLS/);
  });

  it('refuses a Terminate TLS block with neither certificateRefs nor options, naming the rule by its message', async () => {
    // Reading an absent field is a runtime error ("no such key") in kube too; the error names the rule by its
    // message, which is what Gateway API's own CEL tests match on.
    const stderr = await refused(
      gateway('no-certs', `  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Terminate}}`),
    );
    assert.match(
      stderr,
      /spec\.listeners\[0\]\.tls: Invalid value: "object": no such key: (certificateRefs|options) evaluating rule: certificateRefs or options must be specified when mode is Terminate/,
    );
  });

  it('refuses a bad hostname address and a backendRequest timeout above the request timeout', async () => {
    const stderr = await refused(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: timeouts, namespace: default}
spec:
  rules:
  - backendRefs: [{name: api, port: 8080}]
    timeouts: {request: 1s, backendRequest: 5s}`);
    assert.match(
      stderr,
      /spec\.rules\[0\]\.timeouts: Invalid value: "object": backendRequest timeout cannot be longer than request timeout/,
    );
    const address = await refused(
      `${gateway('address', `  - {name: http, protocol: HTTP, port: 80}`)}
  addresses: [{type: Hostname, value: "Not_A_Host"}]`,
    );
    assert.match(
      address,
      /spec\.addresses\[0\]: Invalid value: "object": Hostname value must (be empty or )?(only )?contain only valid characters/,
    );
  });
});

describe('CEL rules on a CRD of our own', { skip: kubectlSkip }, () => {
  const crd = (rule: string): string => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: vaults.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: vaults, singular: vault, kind: Vault}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              tier: {type: string}
            x-kubernetes-validations:
            - rule: ${JSON.stringify(rule)}
              messageExpression: "'size may only grow, not to ' + string(self.size)"
              reason: FieldValueForbidden
              fieldPath: .size`;

  it('refuses a CRD whose rule does not compile, with a 422 naming the rule', async () => {
    const stderr = await refused(crd('self.size >= other.size'));
    assert.match(
      stderr,
      /CustomResourceDefinition "vaults\.example\.com" is invalid: spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.size >= other\.size", Message:"", MessageExpression:"'size may only grow, not to ' \+ string\(self\.size\)", Reason:"FieldValueForbidden", FieldPath:"\.size", OptionalOldSelf:\(\*bool\)\(nil\)\}: compilation failed: ERROR: <input>:1:14: undeclared reference to 'other' \(in container ''\)/,
    );
    const r = await kubectl.run('get', 'crd', 'vaults.example.com');
    assert.notEqual(r.code, 0);
  });

  it('enforces a transition rule on update only, with messageExpression, reason and fieldPath', async () => {
    await kubectl.ok('apply', '-f', await kubectl.manifest(crd('self.size >= oldSelf.size')));
    const vault = (size: number): string =>
      `apiVersion: example.com/v1\nkind: Vault\nmetadata: {name: v, namespace: default}\nspec: {size: ${size}, tier: gold}\n`;
    // Created with any size: the rule names oldSelf, so it has nothing to compare on create.
    await kubectl.ok('apply', '-f', await kubectl.manifest(vault(5)));
    await kubectl.ok('apply', '-f', await kubectl.manifest(vault(7)));
    const stderr = await refused(vault(3));
    assert.match(stderr, /The Vault "v" is invalid: spec\.size: Forbidden: size may only grow, not to 3/);
    const stored = JSON.parse(await kubectl.ok('get', 'vault', 'v', '-o', 'json'));
    assert.equal(stored.spec.size, 7);
  });
});

describe("cert-manager's Issuer rule", { skip: kubectlSkip }, () => {
  const CERT_MANAGER_CRDS = fileURLToPath(new URL('../../../../../deploy/crds.yaml', import.meta.url));
  const issuer = (name: string, venafi: string): string => `apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: ${name}, namespace: default}
spec:
  venafi:
    zone: my-zone
${venafi}`;

  before(async () => {
    await kubectl.ok('apply', '-f', CERT_MANAGER_CRDS);
  });

  it('refuses a Venafi issuer with both tpp and cloud, and stores one with tpp alone', async () => {
    const tpp = '    tpp: {url: "https://tpp.example.com/vedsdk", credentialsRef: {name: tpp-secret}}';
    const cloud = '    cloud: {apiTokenSecretRef: {name: cloud-secret}}';
    const stderr = await refused(issuer('both', `${tpp}\n${cloud}`));
    assert.match(
      stderr,
      /The Issuer "both" is invalid: spec\.venafi: Invalid value: "object": exactly one of tpp, cloud, or ngts must be configured/,
    );
    await kubectl.ok('apply', '-f', await kubectl.manifest(issuer('tpp-only', tpp)));
  });
});
