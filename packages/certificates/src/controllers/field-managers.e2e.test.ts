/**
 * Who wrote what, as managedFields tell it: cert-manager builds one client per controller, whose User-Agent
 * begins `cert-manager-<controller>/`, and kube names the manager of a write without `fieldManager` after
 * that prefix. So on a cluster running cert-manager, `kubectl get certificate --show-managed-fields` names
 * `cert-manager-certificates-readiness`, `cert-manager-certificates-request-manager`, … — and so here. The
 * whole controller runs against the embedded API server and issues through a CA Issuer.
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import {
  type Environment,
  eventually,
  type PreparedIssuer,
  prepareIssuer,
  readyAndDoneIssuing,
  startEnvironment,
} from '@certkit/testenv/conformance/environment';

const NS = 'field-managers';

let env: Environment;
let issuer: PreparedIssuer;
let kubectl: Kubectl;
let workDir: string;

before(async () => {
  if (kubectlSkip) return;
  env = await startEnvironment();
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
  issuer = await prepareIssuer(env, { title: 'CA Issuer', kind: 'Issuer', type: 'CA' }, NS, 'fm');
  workDir = await mkdtemp(join(tmpdir(), 'certkit-field-managers-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: env.server.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
});

after(async () => {
  await env?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  subresource?: string;
}

/** `manager operation[/subresource]` of each managedFields entry, as kubectl shows them. */
async function managers(kind: string, name: string): Promise<string[]> {
  const out = await kubectl.ok('get', kind, name, '-n', NS, '-o', 'json', '--show-managed-fields');
  const entries = (JSON.parse(out) as { metadata: { managedFields?: ManagedFieldsEntry[] } }).metadata
    .managedFields;
  assert.ok(entries, `${kind} ${name} has no managedFields: ${out}`);
  return entries.map((e) => `${e.manager} ${e.operation}${e.subresource ? `/${e.subresource}` : ''}`).sort();
}

describe('managedFields managers', { skip: kubectlSkip }, () => {
  it('name the cert-manager controller that made each write, as on a cluster running cert-manager', async () => {
    // Applied, so that the server tracks its fields from the start (it tracks none of an object never applied).
    const manifest = await kubectl.manifest(`
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
  namespace: ${NS}
spec:
  secretName: web-tls
  issuerRef: {name: ${issuer.issuerRef.name}, kind: ${issuer.issuerRef.kind}, group: cert-manager.io}
  dnsNames: [web.example.com]
`);
    await kubectl.ok('apply', '--server-side', '-f', manifest);
    await eventually(
      async () => readyAndDoneIssuing(await env.certificates.get(NS, 'web')) || undefined,
      'Certificate web Ready',
      60_000,
    );

    const certificate = await managers('certificate', 'web');
    assert.ok(certificate.includes('kubectl Apply'), certificate.join('\n'));
    for (const expected of [
      'cert-manager-certificates-issuing Update/status',
      'cert-manager-certificates-readiness Update/status',
    ]) {
      assert.ok(certificate.includes(expected), `${expected} in:\n${certificate.join('\n')}`);
    }
    // Nothing in the process's own name: every other write is a cert-manager controller's.
    for (const m of certificate.filter((e) => e !== 'kubectl Apply')) {
      assert.match(m, /^cert-manager-certificates-[a-z-]+ Update\/status$/);
    }
  });
});
