import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv } from '@certkit/testenv/cli/cli-process';

/** The `certkit` command as a user runs it: a real process, real flags, Ctrl-C, restarts on the same data. */

// The command as users run it: bin/certkit.js over the build (certkitEnv refuses a stale one).
const main = CERTKIT_BIN;
const env = certkitEnv();
const run = promisify(execFile);

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
}

function start(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 15 s: ${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], output: () => out });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${out}`));
    });
  });
}

function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGINT'): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

interface Answer {
  status: number;
  retryAfter?: string;
  json: { metadata?: { uid?: string } };
}

async function call(dir: string, url: string, method: string, path: string, body?: unknown) {
  const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
  const ca = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
  const agent = new Agent({ ca });
  return new Promise<Answer>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      { method, agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          agent.destroy();
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            json: JSON.parse(text),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('certkit up', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-cli-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves, writes a private kubeconfig, stops on Ctrl-C and keeps objects across restarts', async () => {
    const first = await start(['up', '--data-dir', dir, '--port', '0']);
    const kubeconfig = join(dir, 'kubeconfig');
    assert.equal((await stat(kubeconfig)).mode & 0o777, 0o600);
    assert.match(await readFile(kubeconfig, 'utf8'), new RegExp(first.url.replace(/[.]/g, '\\.')));
    const created = await call(dir, first.url, 'POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'kept' },
      data: { a: '1' },
    });
    assert.equal(created.status, 201);
    assert.equal(await stop(first.child), 0);
    assert.match(first.output(), /SIGINT received, stopping/);

    const second = await start(['up', '--data-dir', dir, '--port', '0']);
    const read = await call(dir, second.url, 'GET', '/api/v1/namespaces/default/configmaps/kept');
    assert.equal(read.status, 200);
    assert.equal(read.json.metadata?.uid, created.json.metadata?.uid);
    assert.equal(await stop(second.child, 'SIGTERM'), 0);
  });

  it('controller: runs against a cluster with the CRDs and counts its requests on /metrics', async () => {
    // `dir` holds what `up` left: the CRDs are installed there.
    const server = await start(['apiserver', '--data-dir', dir, '--port', '0']);
    const metricsPort = 20_000 + Math.floor(Math.random() * 20_000);
    const args = ['controller', '--kubeconfig', join(dir, 'kubeconfig')];
    const controller = spawn(
      process.execPath,
      [main, ...args, '--metrics-bind-address', `127.0.0.1:${metricsPort}`],
      { stdio: 'ignore', env },
    );
    // The informers open their caches with watch-lists (sendInitialEvents), so a watch is the first request.
    const counted =
      /certkit_client_requests_total\{verb="watch",resource="certificates.cert-manager.io",code="200"\} [1-9]/;
    let metrics = '';
    try {
      // Generous: on a loaded machine (the whole suite at once) the controller process takes a while to start.
      const deadline = Date.now() + 60_000;
      while (!counted.test(metrics)) {
        assert.ok(Date.now() < deadline, `no client request metrics on /metrics:\n${metrics}`);
        await new Promise((r) => setTimeout(r, 200));
        metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
          (res) => res.text(),
          () => '',
        );
      }
      // The controller's families beside the client's, and the process metrics users expect of a service.
      for (const family of [
        'controller_runtime_reconcile_total counter',
        'workqueue_depth gauge',
        'certmanager_certificate_ready_status gauge',
        // Those cert-manager's dashboards and alerts query besides (docs/adr/1890).
        'certmanager_certificate_not_after_timestamp_seconds gauge',
        'certmanager_certificate_not_before_timestamp_seconds gauge',
        'certmanager_clock_time_seconds_gauge gauge',
        'certmanager_controller_sync_call_count counter',
        'certmanager_controller_sync_error_count counter',
        'process_resident_memory_bytes gauge',
        'process_cpu_seconds_total counter',
        'nodejs_eventloop_lag_seconds gauge',
        'nodejs_heap_size_used_bytes gauge',
      ])
        assert.match(metrics, new RegExp(`^# TYPE ${family}$`, 'm'));
      assert.match(
        metrics,
        /^certmanager_controller_sync_call_count\{controller="certificates-issuing"\} \d+$/m,
      );
      assert.equal(await stop(controller, 'SIGTERM'), 0);
    } finally {
      controller.kill('SIGKILL');
      await stop(server.child);
    }
  });

  it('exits non-zero with one line of explanation on bad flags', async () => {
    for (const args of [
      ['up', '--port', 'eighty'],
      ['up', '--bogus'],
      ['frobnicate'],
      ['apiserver', '--max-requests-inflight=lots'],
      ['up', '--max-mutating-requests-inflight=-1'],
      ['apiserver', '--sqlite-synchronous', 'sometimes'],
    ]) {
      const err = await run(process.execPath, [main, ...args], { env }).then(
        () => assert.fail(`${args.join(' ')} succeeded`),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(err.code, 2, args.join(' '));
      assert.equal(err.stderr.trim().split('\n').length, 1, err.stderr);
      assert.match(err.stderr, /^certkit: /);
    }
  });

  it('controller: exits 1 with one line naming deploy/crds.yaml when the cluster lacks the CRDs', async () => {
    // A fresh `certkit apiserver` has no CRDs (`up` installed them in `dir`): a cluster as a user's would be
    // before `kubectl apply -f deploy/crds.yaml`.
    const bare = await mkdtemp(join(tmpdir(), 'certkit-cli-'));
    const server = await start(['apiserver', '--data-dir', bare, '--port', '0']);
    const controller = [
      main,
      'controller',
      '--kubeconfig',
      join(bare, 'kubeconfig'),
      '--metrics-bind-address',
      '0',
    ];
    const err = await run(process.execPath, controller, { timeout: 30_000, env }).then(
      () => assert.fail('the controller started without its CRDs'),
      (e: { code: number; stderr: string }) => e,
    );
    await stop(server.child);
    await rm(bare, { recursive: true, force: true });
    assert.equal(err.code, 1);
    assert.equal(err.stderr.trim().split('\n').length, 1, err.stderr);
    assert.match(
      err.stderr,
      /^certkit: the cluster does not serve cert-manager\.io\/v1; install the CRDs first: kubectl apply -f deploy\/crds\.yaml$/m,
    );
  });

  it('controller and up: --enable-gateway-api without the Gateway API CRDs exits 1 with one line', async () => {
    const line =
      /^certkit: the Gateway API CRDs do not seem to be present, but --enable-gateway-api is set to true\. Please install the gateway-api CRDs\. \(.*\)$/m;
    // `dir` holds what `up` left: the cert-manager CRDs, no Gateway API.
    const server = await start(['apiserver', '--data-dir', dir, '--port', '0']);
    const err = await run(
      process.execPath,
      [
        main,
        'controller',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--metrics-bind-address',
        '0',
        '--enable-gateway-api',
        'true',
      ],
      { timeout: 30_000, env },
    ).then(
      () => assert.fail('the controller started without the Gateway API'),
      (e: { code: number; stderr: string }) => e,
    );
    await stop(server.child);
    assert.equal(err.code, 1);
    assert.equal(err.stderr.trim().split('\n').length, 1, err.stderr);
    assert.match(err.stderr, line);

    const fresh = await mkdtemp(join(tmpdir(), 'certkit-cli-'));
    try {
      const up = await run(
        process.execPath,
        [main, 'up', '--data-dir', fresh, '--port', '0', '--enable-gateway-api', 'true'],
        {
          timeout: 30_000,
          env,
        },
      ).then(
        () => assert.fail('up started its controller without the Gateway API'),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(up.code, 1);
      assert.match(up.stderr, line);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });

  it('exits 1 with one line naming --port when the port is taken, for apiserver and up', async () => {
    const first = await start(['apiserver', '--data-dir', dir, '--port', '0']);
    const port = new URL(first.url).port;
    const other = await mkdtemp(join(tmpdir(), 'certkit-cli-'));
    try {
      for (const [command, host] of [
        ['apiserver', '127.0.0.1'],
        ['up', '0.0.0.0'],
      ]) {
        const err = await run(
          process.execPath,
          [main, command, '--data-dir', other, '--port', port, '--host', host],
          { env },
        ).then(
          () => assert.fail(`a second ${command} on the same port started`),
          (e: { code: number; stderr: string }) => e,
        );
        assert.equal(err.code, 1);
        // Only this line: the server's controllers, started before the listen failed, log nothing after it.
        assert.equal(
          err.stderr,
          `certkit: --port ${port}: ${host}:${port} is already in use (EADDRINUSE), perhaps by another certkit up ` +
            'or apiserver; stop it or choose another --port (0 picks a free one)\n',
        );
      }
      // An address this machine does not have (TEST-NET-1): one line naming --host.
      const elsewhere = await run(
        process.execPath,
        [main, 'apiserver', '--data-dir', other, '--port', '0', '--host', '192.0.2.1'],
        { env },
      ).then(
        () => assert.fail('listened on an address this machine does not have'),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(elsewhere.code, 1);
      assert.equal(
        elsewhere.stderr,
        'certkit: --host 192.0.2.1: not an address of this machine (EADDRNOTAVAIL)\n',
      );
    } finally {
      await stop(first.child);
      await rm(other, { recursive: true, force: true });
    }
  });

  it('apiserver --max-mutating-requests-inflight: a write beyond the limit gets 429 with Retry-After', async () => {
    const server = await start([
      'apiserver',
      '--data-dir',
      dir,
      '--port',
      '0',
      '--max-mutating-requests-inflight',
      '1',
    ]);
    const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
    const agent = new Agent({ ca: await readFile(join(dir, 'pki', 'ca.crt'), 'utf8') });
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ metadata: { name: 'held' } });
    try {
      // A create whose body has not all arrived stays in flight, holding the one mutating slot.
      const held = request(`${server.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        agent,
        headers: { ...headers, 'Content-Length': String(body.length) },
      });
      // Destroyed at the end, unanswered.
      held.on('error', () => {});
      held.write(body.slice(0, 5));
      // The held create may not have reached the server yet (its TLS handshake takes a while on a loaded
      // machine): then a create is served; try again, for up to 10 s.
      let refused: Answer | undefined;
      const deadline = Date.now() + 10_000;
      for (let i = 0; refused?.status !== 429 && (i === 0 || Date.now() < deadline); i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        refused = await call(dir, server.url, 'POST', '/api/v1/namespaces/default/configmaps', {
          metadata: { name: `refused-${i}` },
        });
      }
      assert.equal(refused?.status, 429);
      assert.equal(refused?.retryAfter, '1');
      held.destroy();
    } finally {
      agent.destroy();
      await stop(server.child);
    }
  });
});
