/**
 * End to end against the real embedded API server: install the CRDs as a user would, create every
 * example manifest with kubectl's strict field validation, write statuses through the status
 * subresource, and read the printer columns back with kubectl (skipped, with the reason printed, when
 * kubectl is not on PATH).
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
// Tests may start the API server; the certificates package itself never imports it.
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { certManagerCrds } from './crds.ts';
import { loadExamples } from '@certkit/testenv/cert-manager/examples';

const execFileAsync = promisify(execFile);

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {}
  }
  return undefined;
}

const kubectlPath = findOnPath('kubectl');
const skipKubectl = kubectlPath ? false : 'kubectl is not on PATH';
if (skipKubectl) console.log(`# skipping the kubectl column checks: ${skipKubectl}`);

const PLURALS: Record<string, string> = {
  Certificate: 'certificates',
  CertificateRequest: 'certificaterequests',
  Issuer: 'issuers',
  ClusterIssuer: 'clusterissuers',
  Order: 'orders',
  Challenge: 'challenges',
};

function collectionPath(kind: string, namespace?: string): string {
  const ns = namespace ? `/namespaces/${namespace}` : '';
  const group = kind === 'Order' || kind === 'Challenge' ? 'acme.cert-manager.io' : 'cert-manager.io';
  return `/apis/${group}/v1${ns}/${PLURALS[kind]}`;
}

describe('cert-manager.io CRDs on the embedded API server', () => {
  let t: TestServer;
  let workDir: string;

  before(async () => {
    t = await startTestServer();
    workDir = await mkdtemp(join(tmpdir(), 'certkit-crds-'));
  });

  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  /** POSTs until the freshly created CRD's resource is served (establishing is asynchronous). */
  async function createWhenServed(path: string, body: unknown) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await t.fetch('POST', `${path}?fieldValidation=Strict`, { body });
      if (res.status !== 404 || Date.now() > deadline) return res;
      await sleep(50);
    }
  }

  it('installs the six CRDs', async () => {
    for (const crd of certManagerCrds()) {
      const res = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        body: crd,
      });
      assert.equal(res.status, 201, res.text);
    }
  });

  it('creates every example manifest under strict field validation, unchanged', async () => {
    for (const { file, object } of loadExamples()) {
      const { status, ...withoutStatus } = object;
      const res = await createWhenServed(
        collectionPath(object.kind!, object.metadata.namespace),
        withoutStatus,
      );
      assert.equal(res.status, 201, `${file} ${object.kind}/${object.metadata.name}: ${res.text}`);
      assert.equal(res.headers.warning, undefined, `${file}: ${res.headers.warning}`);
      assert.deepEqual(res.json.spec, object.spec, `${file} ${object.kind}/${object.metadata.name}`);
      if (status === undefined) continue;
      // Status is dropped on create; it is written through the status subresource, as controllers do.
      const url = `${collectionPath(object.kind!, object.metadata.namespace)}/${object.metadata.name}/status`;
      const updated = await t.fetch('PUT', `${url}?fieldValidation=Strict`, {
        body: { ...res.json, status },
      });
      assert.equal(updated.status, 200, `${file} status: ${updated.text}`);
      assert.deepEqual(updated.json.status, status);
    }
  });

  it('rejects unknown fields under strict field validation', async () => {
    const res = await t.fetch('POST', `${collectionPath('Certificate', 'default')}?fieldValidation=Strict`, {
      body: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'typo', namespace: 'default' },
        spec: { secretName: 'typo-tls', issuerRef: { name: 'ca-issuer' }, dnsName: ['typo.example.com'] },
      },
    });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.message, /unknown field "spec.dnsName"/);
  });

  it('rejects a cleanupPolicy outside OnDelete/Never', async () => {
    const res = await t.fetch('POST', collectionPath('Certificate', 'default'), {
      body: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'bad-cleanup', namespace: 'default' },
        spec: { secretName: 'bad-cleanup-tls', issuerRef: { name: 'ca-issuer' }, cleanupPolicy: 'Always' },
      },
    });
    assert.equal(res.status, 422, res.text);
    assert.match(
      res.json.message,
      /spec\.cleanupPolicy: Unsupported value: "Always": supported values: "OnDelete", "Never"/,
    );
  });

  describe('kubectl', { skip: skipKubectl }, () => {
    async function kubectl(...args: string[]): Promise<string> {
      const env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
      const { stdout } = await execFileAsync(kubectlPath!, args, { env, timeout: 30_000 });
      return stdout;
    }

    /** Rows of a kubectl table, split on runs of two or more spaces. */
    function table(text: string): string[][] {
      return text
        .trimEnd()
        .split('\n')
        .map((line) => line.trim().split(/\s{2,}/));
    }

    it('shows cert-manager’s Certificate columns, by name and short name', async () => {
      const url = `${collectionPath('Certificate', 'default')}/web`;
      const current = (await t.fetch('GET', url)).json;
      const status = {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            reason: 'Ready',
            message: 'Certificate is up to date and has not expired',
            observedGeneration: 1,
          },
        ],
        notAfter: '2026-04-01T00:00:00Z',
      };
      const res = await t.fetch('PUT', `${url}/status`, { body: { ...current, status } });
      assert.equal(res.status, 200, res.text);

      const rows = table(await kubectl('get', 'certificates', '-n', 'default'));
      assert.deepEqual(rows[0], ['NAME', 'READY', 'SECRET', 'AGE']);
      const web = rows.find((r) => r[0] === 'web');
      assert.deepEqual(web?.slice(0, 3), ['web', 'True', 'web-tls']);

      const wide = table(await kubectl('get', 'cert', '-n', 'default', '-o', 'wide'));
      assert.deepEqual(wide[0], ['NAME', 'READY', 'SECRET', 'ISSUER', 'STATUS', 'EXPIRATION', 'AGE']);
      const webWide = wide.find((r) => r[0] === 'web');
      assert.deepEqual(webWide?.slice(0, 6), [
        'web',
        'True',
        'web-tls',
        'ca-issuer',
        'Certificate is up to date and has not expired',
        '2026-04-01T00:00:00Z',
      ]);
    });

    it('shows the CertificateRequest and issuer columns', async () => {
      const requests = table(await kubectl('get', 'cr', '-n', 'default'));
      assert.deepEqual(requests[0], ['NAME', 'APPROVED', 'DENIED', 'READY', 'ISSUER', 'REQUESTER', 'AGE']);
      // Denied is unset: kubectl leaves the cell blank, which the split above swallows.
      assert.deepEqual(requests[1].slice(0, 5), [
        'web-1',
        'True',
        'True',
        'ca-issuer',
        'system:serviceaccount:cert-manager:cert-manager',
      ]);
      const issuers = table(await kubectl('get', 'issuers', '-n', 'default'));
      assert.deepEqual(issuers[0], ['NAME', 'READY', 'AGE']);
      assert.deepEqual(issuers.find((r) => r[0] === 'ca-issuer')?.slice(0, 2), ['ca-issuer', 'True']);
      const clusterIssuers = table(await kubectl('get', 'ciss', '-o', 'wide'));
      assert.deepEqual(clusterIssuers[0], ['NAME', 'READY', 'STATUS', 'AGE']);
      assert.ok(clusterIssuers.some((r) => r[0] === 'letsencrypt-staging'));
    });

    it('shows cert-manager’s Order and Challenge columns', async () => {
      const orders = table(await kubectl('get', 'orders', '-n', 'default'));
      assert.deepEqual(orders[0], ['NAME', 'STATE', 'AGE']);
      assert.deepEqual(orders[1].slice(0, 2), ['web-1-2963424813', 'valid']);
      const wide = table(await kubectl('get', 'orders.acme.cert-manager.io', '-n', 'default', '-o', 'wide'));
      assert.deepEqual(wide[0], ['NAME', 'STATE', 'ISSUER', 'REASON', 'AGE']);
      // reason is empty: kubectl leaves the cell blank, which the split swallows.
      assert.deepEqual(wide[1].slice(0, 3), ['web-1-2963424813', 'valid', 'letsencrypt-staging']);

      const challenges = table(await kubectl('get', 'challenges', '-n', 'default', '-o', 'wide'));
      assert.deepEqual(challenges[0], ['NAME', 'STATE', 'DOMAIN', 'REASON', 'AGE']);
      assert.deepEqual(challenges[1].slice(0, 4), [
        'web-1-2963424813-1104467473',
        'valid',
        'example.com',
        'Successfully authorized domain',
      ]);
      // Both at once, as users type it; no short names exist for either.
      const both = (await kubectl('get', 'orders,challenges', '-n', 'default', '-o', 'name'))
        .trim()
        .split('\n');
      assert.deepEqual(both, [
        'order.acme.cert-manager.io/web-1-2963424813',
        'challenge.acme.cert-manager.io/web-1-2963424813-1104467473',
      ]);
      const acme = (await kubectl('get', 'cert-manager-acme', '-A', '-o', 'name')).trim().split('\n').sort();
      assert.deepEqual(acme, both.toSorted());
    });

    it('explains order.spec and challenge.spec.solver from the schema', async () => {
      const order = await kubectl('explain', 'order.spec');
      assert.match(order, /GROUP:\s+acme\.cert-manager\.io/);
      assert.match(order, /KIND:\s+Order/);
      for (const field of [
        'request',
        'issuerRef',
        'dnsNames',
        'ipAddresses',
        'duration',
        'profile',
        'replaces',
      ]) {
        assert.match(order, new RegExp(`^\\s+${field}\\s`, 'm'), field);
      }
      assert.match(order, /request\s+<string> -required-/);
      const solver = await kubectl('explain', 'challenge.spec.solver.dns01.rfc2136');
      assert.match(solver, /nameserver\s+<string> -required-/);
      assert.match(solver, /tsigAlgorithm\s+<string>/);
    });

    it('lists everything under the cert-manager category', async () => {
      const names = (await kubectl('get', 'cert-manager', '-A', '-o', 'name')).trim().split('\n').sort();
      assert.ok(names.includes('certificate.cert-manager.io/web'), names.join('\n'));
      assert.ok(names.includes('certificaterequest.cert-manager.io/web-1'));
      assert.ok(names.includes('issuer.cert-manager.io/ca-issuer'));
      assert.ok(names.includes('clusterissuer.cert-manager.io/letsencrypt-staging'));
      assert.ok(names.includes('order.acme.cert-manager.io/web-1-2963424813'));
      assert.ok(names.includes('challenge.acme.cert-manager.io/web-1-2963424813-1104467473'));
    });
  });
});
