/**
 * `certkit controller` as deploy/deployment.yaml starts it (its node flags and environment, read from the
 * manifest) runs without V8's optimizing compilers while it idles on an empty cluster, and turns them on at
 * its first work (docs/adr/1133-optimizing-compilers-on-first-work.md). What V8 compiles is V8's own report:
 * `--trace-opt`, which only prints, writes a line to stdout for every function Maglev or TurboFan compiles.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import {
  callApi,
  CERTKIT_BIN,
  certkitEnv,
  type RunningCli,
  startCli,
} from '@certkit/testenv/cli/cli-process';
import { freePort } from '@certkit/testenv/net/free-ports';
import { DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS } from '@certkit/runtime';

interface Container {
  name: string;
  command: string[];
  env?: { name: string; value?: string }[];
}

/** The controller container's node flags (between `node` and bin/certkit.js) and literal environment. */
async function deployedController(): Promise<{ nodeFlags: string[]; env: Record<string, string> }> {
  const manifest = await readFile(new URL('../../../deploy/deployment.yaml', import.meta.url), 'utf8');
  const deployment = parseAllDocuments(manifest)
    .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Container[] } } } })
    .find((d) => d.kind === 'Deployment');
  const container = deployment?.spec?.template.spec.containers.find((c) => c.name === 'controller');
  assert.ok(container, 'deploy/deployment.yaml has a Deployment with a controller container');
  const [node, ...rest] = container.command;
  assert.equal(node, 'node');
  assert.equal(rest.at(-1), 'packages/cli/bin/certkit.js');
  const env = Object.fromEntries(
    (container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]),
  );
  return { nodeFlags: rest.slice(0, -1), env };
}

/** A line --trace-opt prints once Maglev or TurboFan has compiled a function. */
const OPTIMIZED = /^\[completed compiling .* \(target (MAGLEV|TURBOFAN_JS)\)/m;
const SWITCHED = "Turned V8's optimizing compilers on: first work queued";

describe('certkit controller and V8 optimizing compilers', () => {
  let dir: string;
  let cluster: RunningCli;
  let child: ChildProcess | undefined;
  let stdout = '';
  let stderr = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-compilers-'));
    // `up` installs the CRDs; then `apiserver` on its data is an empty cluster with no controller of its own.
    const up = await startCli(['up', '--data-dir', join(dir, 'cluster'), '--port', '0']);
    await up.stop();
    cluster = await startCli(['apiserver', '--data-dir', join(dir, 'cluster'), '--port', '0']);
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const api = (method: string, path: string, body?: unknown) =>
    callApi(join(dir, 'cluster'), cluster.url, method, path, body);

  async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      assert.ok(child?.exitCode === null, `the controller exited with ${child?.exitCode}: ${stderr}`);
      assert.ok(Date.now() < deadline, `${what} within ${ms / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('runs none while idle, turns them on at its first Certificate, which then gets issued', async () => {
    const { nodeFlags, env } = await deployedController();
    // The flags the switch releases (runtime's optimizing-compilers.ts).
    for (const flag of DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS)
      assert.ok(nodeFlags.includes(flag), `${flag} in ${nodeFlags.join(' ')}`);
    const metrics = `127.0.0.1:${await freePort()}`;
    child = spawn(
      process.execPath,
      [
        ...nodeFlags,
        '--trace-opt',
        CERTKIT_BIN,
        'controller',
        ...['--kubeconfig', join(dir, 'cluster', 'kubeconfig'), '--leader-elect=false'],
        `--metrics-bind-address=${metrics}`,
        // The switch is logged at info; the default is warn.
        '--log-level=info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...certkitEnv(), ...env } },
    );
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));

    // Started, caches synced (the informers' LISTs and watches), then idle for a while.
    await until('the controller ready', () =>
      fetch(`http://${metrics}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      ),
    );
    await new Promise((r) => setTimeout(r, 3000));
    assert.match(stdout, /certkit controller: watching all namespaces/, 'stdout is the controller’s');
    assert.doesNotMatch(stdout, OPTIMIZED, 'nothing optimised while idle');
    assert.ok(!stderr.includes(SWITCHED), stderr);

    // The first work: a self-signed Issuer and a Certificate.
    const issuer = await api('POST', '/apis/cert-manager.io/v1/namespaces/default/issuers', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'self', namespace: 'default' },
      spec: { selfSigned: {} },
    });
    assert.equal(issuer.status, 201, JSON.stringify(issuer.json));
    await until('the switch logged', () => stderr.includes(SWITCHED));
    const line = JSON.parse(stderr.split('\n').find((l) => l.includes(SWITCHED))!) as {
      level: string;
      nodeFlags: string[];
    };
    assert.equal(line.level, 'info');
    assert.deepEqual(line.nodeFlags, DEFERRED_OPTIMIZING_COMPILERS_NODE_FLAGS);

    const certificate = await api('POST', '/apis/cert-manager.io/v1/namespaces/default/certificates', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'first', namespace: 'default' },
      spec: {
        secretName: 'first-tls',
        dnsNames: ['first.example'],
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { name: 'self', kind: 'Issuer' },
      },
    });
    assert.equal(certificate.status, 201, JSON.stringify(certificate.json));
    await until('the Certificate Ready', async () => {
      const { json } = await api('GET', '/apis/cert-manager.io/v1/namespaces/default/certificates/first');
      const conditions = (json.status as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    });
    // Hot code, from here on optimised: a little more work than one Certificate makes enough of it hot.
    await until(
      'V8 to report an optimised function',
      async () => {
        await fetch(`http://${metrics}/metrics`).then((r) => r.text());
        return OPTIMIZED.test(stdout);
      },
      60_000,
    );
    // Maglev as V8 set it up at start-up, compiling off the main thread: the reason for holding it back with
    // --maglev-filter=-* rather than --no-maglev (runtime's optimizing-compilers.ts).
    assert.doesNotMatch(stdout, /^\[compiling method .*\(target MAGLEV\).*kSynchronous/m);
    assert.equal(stderr.split('\n').filter((l) => l.includes(SWITCHED)).length, 1, 'turned on once');
  });
});
