import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Certificate, CertificateRequest } from '@certkit/certificates/api/types';
import { installCrds } from '@certkit/certificates/controller';
import { certificateRequestsRef, certificatesRef } from '@certkit/certificates/controllers/refs';
import { buildCertificateRequest, generatePrivateKey } from '@certkit/certificates/pki/index';
import { builtins, KubeClient, loadKubeconfig, type ResourceClient } from '@certkit/runtime';
import { type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';
import { runCliOnTerminal } from '@certkit/testenv/cli/pseudo-terminal';

/**
 * `certkit check api`, `approve`, `deny` and `renew`'s progress line as a user runs them, against `certkit
 * apiserver` in a process of its own. No controller runs, so nothing approves a request behind the test's back
 * (the built-in approver would) and a renewed Certificate stays marked.
 */

describe('certkit check api, approve, deny (against certkit apiserver)', () => {
  let dir: string;
  let server: RunningCli;
  let admin: KubeClient;
  let kubeconfig: string;
  let requests: ResourceClient<CertificateRequest>;
  let csr: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-approve-'));
    server = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
    kubeconfig = join(dir, 'kubeconfig');
    admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
    requests = admin.resource<CertificateRequest>(certificateRequestsRef);
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    csr = Buffer.from(await buildCertificateRequest({ dnsNames: ['a.example'] }, key)).toString('base64');
    await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: 'a' } });
  });

  after(async () => {
    admin?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCli([...args, '--kubeconfig', kubeconfig]);

  // The first test needs the CRDs absent and installs them; the others install them if they run alone
  // (--test-name-pattern).
  let crds: Promise<void> | undefined;
  const ensureCrds = () => (crds ??= installCrds(admin));

  /** A kubeconfig naming a port nothing listens on. */
  async function closedPortKubeconfig(): Promise<string> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const text = (await readFile(kubeconfig, 'utf8')).replace(
      /server: "?https:\/\/[^\s"]+"?/,
      `server: "https://127.0.0.1:${port}"`,
    );
    assert.ok(text.includes(`:${port}"`), 'the kubeconfig names the closed port');
    const path = join(dir, 'closed.kubeconfig');
    await writeFile(path, text, { mode: 0o600 });
    return path;
  }

  it('check api: one line and exit 1 while the CRDs are not installed; ready once they are', async () => {
    const missing = await cli('check', 'api');
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.equal(
      missing.stderr,
      'certkit: the cert-manager CRDs are not yet installed on the Kubernetes API server\n',
    );

    await ensureCrds();
    // The CRDs are served once established: --wait rides that out, as the Helm chart's startup Job does.
    const ready = await cli('check', 'api', '--wait', '30s', '--interval', '100ms');
    assert.equal(ready.code, 0, ready.stderr);
    assert.equal(ready.stdout, 'The cert-manager API is ready\n');
    assert.equal(ready.stderr, '', 'a pipe gets no progress line');
    // A dry run: nothing was stored.
    assert.deepEqual((await requests.list(undefined)).items, []);
  });

  it('check api --wait: keeps trying until the time is up, then one line, exit 124 (as cmctl); a pipe gets no progress', async () => {
    const closed = await closedPortKubeconfig();
    const started = Date.now();
    const result = await runCli([
      'check',
      'api',
      '--kubeconfig',
      closed,
      '--wait',
      '2s',
      '--interval',
      '500ms',
    ]);
    const took = Date.now() - started;
    // cmctl's exit status for a wait that ran out (its context.DeadlineExceeded); one check that fails is 1.
    assert.equal(result.code, 124);
    assert.match(
      result.stderr,
      /^certkit: the API server at https:\/\/127\.0\.0\.1:\d+ refused the connection: is it running\?\n$/,
    );
    assert.ok(took >= 2000, `gave up after ${took} ms, before --wait`);
  });

  it("check api --wait=2s -v (cert-manager's startupapicheck Job's arguments): each failed check's reason, then exit 124", async () => {
    const closed = await closedPortKubeconfig();
    const result = await runCli([
      'check',
      'api',
      '--kubeconfig',
      closed,
      '--wait=2s',
      '--interval',
      '500ms',
      '-v',
    ]);
    assert.equal(result.code, 124, result.stderr);
    const lines = result.stderr.trim().split('\n');
    assert.ok(lines.length >= 3, result.stderr);
    for (const [i, line] of lines.slice(0, -1).entries()) {
      assert.match(
        line,
        new RegExp(
          `^Not ready \\(attempt ${i + 1}\\): the API server at https://127\\.0\\.0\\.1:\\d+ refused the connection`,
        ),
      );
    }
    assert.match(lines.at(-1)!, /^certkit: the API server at .* refused the connection: is it running\?$/);
    // Without -v (or with -v 0) only the last reason.
    const quiet = await runCli(['check', 'api', '--kubeconfig', closed, '-v', '0']);
    assert.equal(quiet.code, 1);
    assert.equal(quiet.stderr.split('\n').length, 2, quiet.stderr);
  });

  it('check api --wait on a terminal: a status line redrawn in place, erased before the last word', async () => {
    const closed = await closedPortKubeconfig();
    const out = join(dir, 'check.out');
    const { code, terminal } = await runCliOnTerminal(
      ['check', 'api', '--kubeconfig', closed, '--wait', '2s', '--interval', '500ms'],
      out,
    );
    assert.equal(code, 124, terminal);
    const updates = terminal.split('\r\x1b[K').filter(Boolean);
    assert.ok(updates.length >= 3, `a status line per attempt: ${JSON.stringify(terminal)}`);
    assert.match(updates[0], /^Waiting for the cert-manager API \(0s of 2s, attempt 1\): the API server at /);
    assert.match(
      updates.at(-1)!,
      /^certkit: the API server at https:\/\/127\.0\.0\.1:\d+ refused the connection/,
    );
    assert.equal(await readFile(out, 'utf8'), '');
  });

  it('check api: refuses bad durations and arguments with one line, exit 2', async () => {
    const bad = await cli('check', 'api', '--wait', '5');
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'certkit: invalid --wait "5": time: missing unit in duration "5"\n');
    const extra = await cli('check', 'api', 'now');
    assert.equal(extra.code, 2);
    assert.equal(extra.stderr, 'certkit: certkit check api takes no arguments\n');
  });

  async function newRequest(name: string): Promise<void> {
    await ensureCrds();
    await requests.create('a', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'CertificateRequest',
      metadata: { name, namespace: 'a' },
      spec: { issuerRef: { name: 'ca' }, request: csr },
    } as CertificateRequest);
  }

  function condition(cr: CertificateRequest, type: string) {
    return cr.status?.conditions?.find((c) => c.type === type);
  }

  it("approve NAME: Approved=True with cmctl's reason and message, written through the status subresource", async () => {
    await newRequest('first');
    const result = await cli('approve', '-n', 'a', 'first');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "Approved CertificateRequest 'a/first'\n");
    const approved = condition(await requests.get('a', 'first'), 'Approved');
    assert.equal(approved?.status, 'True');
    assert.equal(approved?.reason, 'KubectlCertManager');
    assert.equal(approved?.message, 'manually approved by "certkit"');
    assert.ok(approved?.lastTransitionTime);
  });

  it('approve --reason --message; a second approve, and deny, are refused: already approved', async () => {
    await newRequest('second');
    const result = await cli(
      'approve',
      '-n',
      'a',
      'second',
      '--reason',
      'Reviewed',
      '--message',
      'looks right',
    );
    assert.equal(result.code, 0, result.stderr);
    const approved = condition(await requests.get('a', 'second'), 'Approved');
    assert.deepEqual([approved?.reason, approved?.message], ['Reviewed', 'looks right']);
    for (const verb of ['approve', 'deny']) {
      const again = await cli(verb, '-n', 'a', 'second');
      assert.equal(again.code, 1);
      assert.equal(again.stderr, 'certkit: CertificateRequest is already approved\n');
    }
  });

  it('deny NAME: Denied=True; approving it afterwards is refused: already denied', async () => {
    await newRequest('third');
    const result = await cli('deny', '-n', 'a', 'third', '--reason', 'Policy');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "Denied CertificateRequest 'a/third'\n");
    const cr = await requests.get('a', 'third');
    const denied = condition(cr, 'Denied');
    assert.deepEqual(
      [denied?.status, denied?.reason, denied?.message],
      ['True', 'Policy', 'manually denied by "certkit"'],
    );
    assert.equal(condition(cr, 'Approved'), undefined);
    for (const verb of ['approve', 'deny']) {
      const again = await cli(verb, '-n', 'a', 'third');
      assert.equal(again.code, 1);
      assert.equal(again.stderr, 'certkit: CertificateRequest is already denied\n');
    }
  });

  it('approve and deny: a missing request, a missing name, an empty reason: one line, non-zero', async () => {
    await ensureCrds();
    for (const verb of ['approve', 'deny']) {
      const missing = await cli(verb, '-n', 'a', 'nope');
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr, 'certkit: certificaterequests.cert-manager.io "nope" not found\n');
      const noName = await cli(verb);
      assert.equal(noName.code, 2);
      assert.equal(
        noName.stderr,
        `certkit: the name of the CertificateRequest to ${verb} has to be provided as an argument\n`,
      );
      const two = await cli(verb, 'x', 'y');
      assert.equal(two.code, 2);
      assert.equal(
        two.stderr,
        'certkit: only one argument can be passed: the name of the CertificateRequest\n',
      );
    }
    const everywhere = await cli('deny', 'first', '-A');
    assert.equal(everywhere.code, 2);
    assert.equal(everywhere.stderr, 'certkit: certkit deny takes a namespace (-n), not --all-namespaces\n');
    const noReason = await cli('approve', '-n', 'a', 'first', '--reason', '');
    assert.equal(noReason.code, 2);
    assert.equal(
      noReason.stderr,
      'certkit: a reason must be given as to who approved this CertificateRequest\n',
    );
  });

  it('renew --all: a progress line on a terminal (stderr), plain lines on stdout; nothing of it in a pipe', async () => {
    await ensureCrds();
    await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: 'bulk' } });
    const certificates = admin.resource<Certificate>(certificatesRef);
    const count = 300;
    for (let i = 0; i < count; i++) {
      await certificates.create('bulk', {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: `c${i}`, namespace: 'bulk' },
        spec: { secretName: `c${i}-tls`, dnsNames: [`c${i}.example`], issuerRef: { name: 'ca' } },
      } as Certificate);
    }
    const out = join(dir, 'renew.out');
    const { code, terminal } = await runCliOnTerminal(
      ['renew', '--all', '-n', 'bulk', '--kubeconfig', kubeconfig, '--kube-api-qps=-1'],
      out,
    );
    assert.equal(code, 0, terminal);
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    assert.equal(lines.length, count);
    assert.ok(lines.every((l) => /^Manually triggered issuance of Certificate bulk\/c\d+$/.test(l)));
    const updates = terminal.split('\r\x1b[K').filter(Boolean);
    assert.equal(updates[0], `Renewing 0/${count} Certificates (0%)`);
    assert.ok(
      updates.every((u) => /^Renewing \d+\/300 Certificates \(\d+%\)$/.test(u)),
      JSON.stringify(updates),
    );
    const counts = updates.map((u) => Number(/^Renewing (\d+)\//.exec(u)![1]));
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => a - b),
      'the count only grows',
    );
    assert.ok(terminal.endsWith('\r\x1b[K'), 'the line is erased at the end');

    // The same in a pipe: the lines, and nothing on stderr.
    const piped = await cli('renew', '--all', '-n', 'bulk', '--kube-api-qps=-1');
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stderr, '');
    assert.equal(piped.stdout.trim().split('\n').length, count);
  });
});
