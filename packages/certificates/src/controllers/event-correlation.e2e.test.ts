/**
 * A controller that fails in a loop writes one Event whose count grows, as cert-manager's does through
 * client-go's EventCorrelator: the issuing controller records KeystorePasswordSecretNotFound at each retry of a
 * Certificate whose keystore password Secret is missing, and `kubectl describe` shows it once, `(xN over …)`.
 * The whole controller runs against the embedded API server, and issues through a CA Issuer.
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { Event } from 'kubernetes-types/core/v1.d.ts';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import {
  type Environment,
  eventually,
  type PreparedIssuer,
  prepareIssuer,
  startEnvironment,
} from '@certkit/testenv/conformance/environment';

const NS = 'event-correlation';

let env: Environment;
let issuer: PreparedIssuer;
let kubectl: Kubectl;
let workDir: string;

before(async () => {
  if (kubectlSkip) return;
  env = await startEnvironment();
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
  issuer = await prepareIssuer(env, { title: 'CA Issuer', kind: 'Issuer', type: 'CA' }, NS, 'corr');
  workDir = await mkdtemp(join(tmpdir(), 'certkit-event-correlation-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: env.server.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
});

after(async () => {
  await env?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('repeated Events', { skip: kubectlSkip }, () => {
  it('a failure retried N times is one Event with count N, shown once by kubectl describe', async () => {
    await env.certificates.create(NS, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'loop', namespace: NS },
      spec: {
        secretName: 'loop-tls',
        issuerRef: issuer.issuerRef,
        dnsNames: ['loop.example.com'],
        keystores: { jks: { create: true, passwordSecretRef: { name: 'missing', key: 'password' } } },
      },
    });
    const events = env.admin.resource<Event & KubeObject>(builtins.events);
    const failures = async () =>
      (
        await events.list(NS, {
          fieldSelector: 'involvedObject.name=loop,reason=KeystorePasswordSecretNotFound',
        })
      ).items;
    // The issuing controller retries with backoff (1 s, 2 s, 4 s, …): three failures within about 10 s.
    const [folded] = await eventually(
      async () => {
        const found = await failures();
        return found.some((e) => (e.count ?? 0) >= 3) ? found : undefined;
      },
      'KeystorePasswordSecretNotFound counted three times',
      30_000,
    );
    const all = await failures();
    assert.equal(all.length, 1, `one Event, not one per failure: ${all.map((e) => e.count).join()}`);
    assert.equal(folded.type, 'Warning');
    assert.equal(folded.source?.component, 'cert-manager-certificates-issuing');
    assert.equal(folded.message, 'JKS keystore password Secret "missing" not found');
    assert.ok(
      folded.lastTimestamp! > folded.firstTimestamp!,
      `${folded.firstTimestamp} .. ${folded.lastTimestamp}`,
    );

    const described = await kubectl.ok('describe', 'certificate', 'loop', '-n', NS);
    const lines = described.split('\n').filter((l) => l.includes('KeystorePasswordSecretNotFound'));
    assert.equal(lines.length, 1, described);
    assert.match(
      lines[0],
      /Warning\s+KeystorePasswordSecretNotFound\s+\S+ \(x\d+ over \S+\)\s+cert-manager-certificates-issuing/,
    );
  });
});
