import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Certificate } from '@certkit/certificates/api/types';
import { installCrds } from '@certkit/certificates/controller';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import { builtins, KubeClient, loadKubeconfig, type ResourceClient } from '@certkit/runtime';
import { type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * `certkit renew` as a user runs it, against `certkit apiserver` in a process of its own: which Certificates
 * each form of the command (names, --all, -l, -A, -n) marks Issuing=True ManuallyTriggered, what it prints,
 * and cmctl's refusals of flag combinations. No controller runs, so a marked Certificate stays marked.
 */

describe('certkit renew', () => {
  let dir: string;
  let server: RunningCli;
  let admin: KubeClient;
  let certificates: ResourceClient<Certificate>;
  let kubeconfig: string;

  // Namespaces a and b, each with web (app=web), api (app=api) and db (no label).
  const names = ['web', 'api', 'db'];
  const namespaces = ['a', 'b'];
  const labelsOf: Record<string, Record<string, string> | undefined> = {
    web: { app: 'web' },
    api: { app: 'api' },
    db: undefined,
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-renew-'));
    server = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
    kubeconfig = join(dir, 'kubeconfig');
    admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
    await installCrds(admin);
    certificates = admin.resource<Certificate>(certificatesRef);
    for (const ns of namespaces) {
      await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await certificates.list('a', { limit: 1 });
        break;
      } catch (err) {
        if (attempt > 300) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });

  after(async () => {
    admin?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // Every test starts from the same six Certificates, none issuing.
  beforeEach(async () => {
    for (const ns of namespaces) {
      for (const cert of (await certificates.list(ns)).items)
        await certificates.delete(ns, cert.metadata.name!);
      for (const name of names) {
        await certificates.create(ns, {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: { name, namespace: ns, labels: labelsOf[name] },
          spec: { secretName: `${name}-tls`, dnsNames: [`${name}.${ns}.example`], issuerRef: { name: 'ca' } },
        } as Certificate);
      }
    }
  });

  const renew = (...args: string[]) => runCli(['renew', '--kubeconfig', kubeconfig, ...args]);

  /** `ns/name` of every Certificate marked Issuing=True ManuallyTriggered, sorted. */
  async function marked(): Promise<string[]> {
    const out: string[] = [];
    for (const cert of (await certificates.list(undefined)).items) {
      const issuing = cert.status?.conditions?.find((c) => c.type === 'Issuing');
      if (issuing?.status !== 'True') continue;
      assert.equal(issuing.reason, 'ManuallyTriggered');
      assert.equal(issuing.message, 'Certificate re-issuance manually triggered');
      assert.equal(issuing.observedGeneration, cert.metadata.generation);
      out.push(`${cert.metadata.namespace}/${cert.metadata.name}`);
    }
    return out.sort();
  }

  const lines = (text: string) => text.trim().split('\n').sort();
  const triggered = (...keys: string[]) =>
    keys.map((k) => `Manually triggered issuance of Certificate ${k}`).sort();

  it('sets Issuing in place, as cmctl does: the other conditions keep their order and times', async () => {
    const earlier = '2026-01-01T00:00:00Z';
    const web = await certificates.get('a', 'web');
    await certificates.update(
      {
        ...web,
        status: {
          conditions: [
            { type: 'Issuing', status: 'False', reason: 'Done', lastTransitionTime: earlier },
            { type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: earlier },
          ],
        },
      },
      { subresource: 'status' },
    );
    const before = Date.now() - 1000;
    const r = await renew('-n', 'a', 'web');
    assert.equal(r.code, 0, r.stderr);
    const conditions = (await certificates.get('a', 'web')).status!.conditions!;
    assert.deepEqual(
      conditions.map((c) => `${c.type}=${c.status}`),
      ['Issuing=True', 'Ready=True'],
    );
    const issuedAt = conditions[0]!.lastTransitionTime!;
    assert.ok(Date.parse(issuedAt) >= before, issuedAt);
    assert.equal(conditions[1]!.lastTransitionTime, earlier);
    const again = await renew('-n', 'a', 'web');
    assert.equal(again.stdout, 'certificate a/web is already being issued\n');
  });

  it('renews the named Certificates in the namespace of -n', async () => {
    const r = await renew('-n', 'b', 'web', 'db');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), triggered('b/web', 'b/db'));
    assert.deepEqual(await marked(), ['b/db', 'b/web']);
  });

  it('fails on a missing name and renews none of the names', async () => {
    const r = await renew('-n', 'a', 'web', 'missing');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^certkit: .*missing.*not found/);
    assert.deepEqual(await marked(), []);
  });

  it('--all renews every Certificate of one namespace, and only there', async () => {
    const r = await renew('--all', '-n', 'a');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), triggered('a/web', 'a/api', 'a/db'));
    assert.deepEqual(await marked(), ['a/api', 'a/db', 'a/web']);
  });

  it('--all -A renews every Certificate in every namespace', async () => {
    const r = await renew('--all', '-A');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 6);
    assert.deepEqual(await marked(), ['a/api', 'a/db', 'a/web', 'b/api', 'b/db', 'b/web']);
  });

  it('-l renews the Certificates the selector matches: -A across namespaces, else one namespace', async () => {
    let r = await renew('-A', '-l', 'app=web');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), triggered('a/web', 'b/web'));
    r = await renew('--selector', 'app in (api)', '-n', 'b');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), triggered('b/api'));
    assert.deepEqual(await marked(), ['a/web', 'b/api', 'b/web']);
  });

  it('says so on stderr and exits 0 when nothing matches', async () => {
    let r = await renew('-A', '-l', 'app=nothing');
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', 'No Certificates found\n']);
    r = await renew('--all', '-n', 'default');
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', 'No Certificates found in default namespace.\n']);
    assert.deepEqual(await marked(), []);
  });

  it('leaves a Certificate that is already issuing alone, and says so', async () => {
    assert.equal((await renew('-n', 'a', 'web')).code, 0);
    const before = await certificates.get('a', 'web');
    const r = await renew('--all', '-n', 'a');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      lines(r.stdout),
      [...triggered('a/api', 'a/db'), 'certificate a/web is already being issued'].sort(),
    );
    assert.equal(
      (await certificates.get('a', 'web')).metadata.resourceVersion,
      before.metadata.resourceVersion,
    );
  });

  it('renews many at once, each exactly once, printing them in the order listed', async () => {
    for (let i = 0; i < 40; i++) {
      await certificates.create('b', {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: `bulk-${String(i).padStart(2, '0')}`, namespace: 'b', labels: { bulk: 'yes' } },
        spec: { secretName: `bulk-${i}-tls`, dnsNames: [`bulk-${i}.example`], issuerRef: { name: 'ca' } },
      } as Certificate);
    }
    const r = await renew('-n', 'b', '-l', 'bulk=yes');
    assert.equal(r.code, 0, r.stderr);
    const want = Array.from({ length: 40 }, (_, i) => `b/bulk-${String(i).padStart(2, '0')}`);
    assert.deepEqual(
      r.stdout.trim().split('\n'),
      want.map((k) => `Manually triggered issuance of Certificate ${k}`),
    );
    assert.deepEqual(await marked(), want);
    for (let i = 0; i < 40; i++) await certificates.delete('b', `bulk-${String(i).padStart(2, '0')}`);
  });

  for (const [args, message] of [
    [
      [],
      'please either supply one or more Certificate resource names, label selectors, or use the --all flag',
    ],
    [['--all', '-l', 'app=web'], 'cannot specify label selectors in conjunction with --all flag'],
    [['web', '-l', 'app=web'], 'cannot specify Certificate names in conjunction with label selectors'],
    [['web', '--all'], 'cannot specify Certificate names in conjunction with --all flag'],
    [['web', '-A'], 'cannot specify Certificate names in conjunction with --all-namespaces flag'],
    [['-A', '-l', 'app in (web'], 'invalid --selector'],
    [['--all', '--kube-api-qps', '0'], '--kube-api-qps must be a positive number'],
  ] as const) {
    it(`refuses ${JSON.stringify(args.join(' '))} with exit 2 and one line`, async () => {
      const r = await renew(...args);
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.startsWith(`certkit: ${message}`), r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.deepEqual(await marked(), []);
    });
  }
});
