import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startCli } from '@certkit/testenv/cli/cli-process';
import { gatewayApiCrdPath } from '@certkit/testenv/gateway-api/crds';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

/**
 * The listenerset controller as a cert-manager user turns it on: `--enable-gateway-api`,
 * `--enable-gateway-api-listenerset` and `--feature-gates=ListenerSets=true` on `certkit up`, whose controller runs
 * under deploy/rbac.yaml's ServiceAccount (so the shipped roles must let it read ListenerSets and write their
 * Certificates). Without the ListenerSet CRD it stops at start with one line; with it, a ListenerSet applied with
 * kubectl gets its Certificate.
 */

const LISTENER_SET_FLAGS = [
  '--enable-gateway-api',
  'true',
  '--enable-gateway-api-listenerset',
  'true',
  '--feature-gates',
  'ListenerSets=true',
];

describe('certkit up with ListenerSets', { skip: kubectlSkip }, () => {
  let dir: string;
  let kubectl: Kubectl;

  /** Applies the Gateway API CRDs with `certkit apiserver` running on the data dir, as a user would. */
  async function installCrds(...resources: ('gateways' | 'listenersets')[]): Promise<void> {
    const apiserver = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
    try {
      for (const resource of resources) {
        await kubectl.ok('apply', '--server-side', '-f', gatewayApiCrdPath(resource));
        await kubectl.ok('wait', '--for=condition=Established', `crd/${resource}.gateway.networking.k8s.io`);
      }
    } finally {
      await apiserver.stop();
    }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-listenerset-'));
    kubectl = kubectlFor({ ...process.env, KUBECONFIG: join(dir, 'kubeconfig') }, dir);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses an unknown feature gate in one usage line, exit 2', async () => {
    const { code, stderr } = await runCli(['controller', '--feature-gates', 'ListenerSet=true']);
    assert.equal(code, 2);
    assert.equal(stderr.trim(), 'certkit: --feature-gates: unrecognized feature gate: ListenerSet');
  });

  it('stops at start with one line while the cluster serves Gateways but not ListenerSets', async () => {
    await installCrds('gateways');
    const { code, stderr } = await runCli(['up', '--data-dir', dir, '--port', '0', ...LISTENER_SET_FLAGS]);
    assert.equal(code, 1);
    assert.equal(
      stderr.trim(),
      'certkit: found GatewayAPI CRDs; however the Gateway API ListenerSet CRD do not seem to be present, but ListenerSets is set to true. Please install the gateway-api ListenerSet CRD.',
    );
  });

  it('with the CRD: a ListenerSet applied with kubectl gets a Ready Certificate it controls', async () => {
    await installCrds('listenersets');
    const up = await startCli(['up', '--data-dir', dir, '--port', '0', ...LISTENER_SET_FLAGS]);
    try {
      const manifest = await kubectl.manifest(`apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: selfsigned}
spec: {selfSigned: {}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: default, annotations: {cert-manager.io/cluster-issuer: selfsigned}}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: default}
spec:
  parentRef: {name: edge}
  listeners:
  - {name: https, protocol: HTTPS, port: 443, hostname: team.example.com, tls: {certificateRefs: [{name: team-tls}]}}
`);
      await kubectl.ok('apply', '-f', manifest);
      await kubectl.ok(
        'wait',
        '--for=condition=Ready',
        '--timeout=60s',
        'certificate/team-tls',
        '-n',
        'default',
      );
      const certificate = JSON.parse(
        await kubectl.ok('get', 'certificate', 'team-tls', '-n', 'default', '-o', 'json'),
      );
      assert.deepEqual(
        certificate.metadata.ownerReferences.map((ref: { kind: string; name: string }) => [
          ref.kind,
          ref.name,
        ]),
        [['ListenerSet', 'team']],
      );
      assert.deepEqual(certificate.spec.dnsNames, ['team.example.com']);
      assert.deepEqual(certificate.spec.issuerRef, {
        name: 'selfsigned',
        kind: 'ClusterIssuer',
        group: 'cert-manager.io',
      });
      const events = await kubectl.ok(
        'get',
        'events',
        '-n',
        'default',
        '--field-selector',
        'involvedObject.kind=ListenerSet,reason=CreateCertificate',
        '-o',
        'jsonpath={.items[*].message}',
      );
      assert.equal(events, 'Successfully created Certificate "team-tls"');
    } finally {
      await up.stop();
    }
  });
});
