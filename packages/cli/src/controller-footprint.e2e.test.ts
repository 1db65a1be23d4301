/**
 * What an idle `certkit controller` loads, as production runs it (the compiled bin/certkit.js): every module it
 * loads stays in its RSS for the life of the process, so one that the idle controller does not use is memory
 * a Kubernetes limit pays for nothing (issue 19's idle goal, docs/adr/1101-controller-process-setup.md). The
 * process records every module URL it loads (a module hook given with --import) and Node's list of built-ins,
 * and writes both when it exits on SIGTERM.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  callApi,
  CERTKIT_BIN,
  certkitEnv,
  type RunningCli,
  startCli,
} from '@certkit/testenv/cli/cli-process';
import { freePort } from '@certkit/testenv/net/free-ports';

/** Preloaded with --import: records module URLs as they load, writes them with the built-ins at exit. */
const RECORDER = `data:text/javascript,${encodeURIComponent(`
  import { registerHooks } from 'node:module';
  import { writeFileSync } from 'node:fs';
  const loaded = [];
  registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
  process.on('exit', () => writeFileSync(process.env.FOOTPRINT_FILE,
    JSON.stringify({ loaded, builtins: process.moduleLoadList })));
`)}`;

interface Footprint {
  /** Module URLs (file: for packages and dependencies). */
  loaded: string[];
  /** Node's internal list: `NativeModule http2`, `Internal Binding ...`. */
  builtins: string[];
}

/** The controller's own code, bundled (scripts/bundle-controller.ts), and the files that bundle replaces. */
const CONTROLLER_BUNDLE = /\/packages\/cli\/dist\/controller-bundle\/[^/]+\.js$/;
const UNBUNDLED =
  /\/packages\/(apimachinery|runtime|certificates|cli)\/(dist\/(?!controller-bundle\/)|src\/)/;
/** What the idle controller must not load, by where it comes from. */
const API_SERVER = /\/packages\/apiserver\/|\/node_modules\/(etcd3|@grpc|protobufjs|@peculiar|@kubernetes)\//;
const UNDICI = /\/node_modules\/undici\//;
const JOSE = /\/node_modules\/jose\//;
const PROM_CLIENT = /\/node_modules\/(prom-client|@opentelemetry)\//;
/** node:http2 and Node's bundled undici: what an ESM import of node:http brings (runtime/client/node-http.ts). */
const HTTP2 = /^NativeModule (http2|internal\/deps\/undici\/undici)$/;
/**
 * Built-ins the bundle imports lazily (scripts/bundle-controller.ts, docs/adr/1131) that an idle controller
 * does not use: the memory release's vm, and what ES namespaces of node:util and node:crypto and the global
 * `performance` would load. Not node:dgram (the DNS-01 solver) and node:child_process (exec credentials),
 * which the bundle does not load at idle either (bench:idle's processes show neither), but Node loads for
 * the recorder's module hooks; nor node:module's source map support, which the recorder's import loads.
 */
const UNUSED_BUILTINS =
  /^NativeModule (vm|worker_threads|perf_hooks|internal\/crypto\/webcrypto|internal\/util\/diff)$/;

const matching = (urls: string[], re: RegExp) => urls.filter((u) => re.test(u));

describe('the idle certkit controller', () => {
  let dir: string;
  let cluster: RunningCli;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-footprint-'));
    // `up` installs the CRDs; then `apiserver` on its data is the cluster, with no controller of its own (the
    // one in `up` would answer the ACME Issuer below before the controller under test does).
    const up = await startCli(['up', '--data-dir', join(dir, 'cluster'), '--port', '0']);
    await up.stop();
    cluster = await startCli(['apiserver', '--data-dir', join(dir, 'cluster'), '--port', '0']);
  });
  after(async () => {
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts the controller (metrics endpoint on, as deployed), runs `during` once it is ready, stops it. */
  async function footprint(
    name: string,
    during: (metrics: string) => Promise<void>,
    kubeconfig = join(dir, 'cluster', 'kubeconfig'),
  ): Promise<Footprint> {
    const file = join(dir, `${name}.json`);
    const metrics = `http://127.0.0.1:${await freePort()}`;
    const child: ChildProcess = spawn(
      process.execPath,
      [
        '--import',
        RECORDER,
        CERTKIT_BIN,
        'controller',
        ...['--kubeconfig', kubeconfig, '--leader-elect=false'],
        ...['--metrics-bind-address', new URL(metrics).host],
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], env: { ...certkitEnv(), FOOTPRINT_FILE: file } },
    );
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const deadline = Date.now() + 60_000;
      while (
        (await fetch(`${metrics}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) !== 200
      ) {
        assert.ok(child.exitCode === null, `the controller exited with ${child.exitCode}`);
        assert.ok(Date.now() < deadline, 'the controller did not get ready within 60 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      await during(metrics);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    return JSON.parse(await readFile(file, 'utf8')) as Footprint;
  }

  it('loads no API server module, no undici, jose or node:http2, and no prom-client until scraped', async () => {
    const idle = await footprint('idle', async () => {
      // Idle for a while: the informers have synced, the controllers wait for work.
      await new Promise((r) => setTimeout(r, 1000));
    });
    // The recorder saw the controller's own modules (so an empty list cannot pass for a lean one), and they
    // are the bundle's chunks: not one of the ~250 files of the packages' dist/ (docs/adr/1130).
    assert.ok(matching(idle.loaded, CONTROLLER_BUNDLE).length > 3);
    assert.deepEqual(matching(idle.loaded, UNBUNDLED), []);
    assert.deepEqual(matching(idle.loaded, API_SERVER), []);
    assert.deepEqual(matching(idle.loaded, UNDICI), []);
    assert.deepEqual(matching(idle.loaded, JOSE), []);
    assert.deepEqual(matching(idle.loaded, PROM_CLIENT), []);
    assert.deepEqual(matching(idle.builtins, HTTP2), []);
    assert.deepEqual(matching(idle.builtins, UNUSED_BUILTINS), []);
    // The premise: the recorder sees built-ins the idle controller does load.
    assert.ok(idle.builtins.includes('NativeModule tls'));
  });

  it('authenticates with an exec credential plugin, whose node:child_process the bundle loads on use', async () => {
    // The cluster's own kubeconfig, its token handed out by a plugin instead, which leaves a mark that it ran:
    // a controller that gets ready has listed and watched with that token.
    const config = parseYaml(await readFile(join(dir, 'cluster', 'kubeconfig'), 'utf8')) as {
      users: { user: Record<string, unknown> }[];
    };
    const { token } = config.users[0].user;
    assert.equal(typeof token, 'string');
    const ran = join(dir, 'exec-plugin-ran');
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token },
    };
    const plugin = `require('node:fs').writeFileSync(${JSON.stringify(ran)}, 'ran');
      process.stdout.write(${JSON.stringify(JSON.stringify(credential))});`;
    config.users[0].user = {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        interactiveMode: 'Never',
        command: process.execPath,
        args: ['-e', plugin],
      },
    };
    const kubeconfig = join(dir, 'exec-kubeconfig.json');
    await writeFile(kubeconfig, JSON.stringify(config));
    const withExec = await footprint('exec', async () => {}, kubeconfig);
    assert.equal(await readFile(ran, 'utf8'), 'ran');
    assert.deepEqual(matching(withExec.loaded, UNBUNDLED), []);
  });

  it('loads prom-client at the first scrape, with the process_* and nodejs_* families', async () => {
    let text = '';
    const scraped = await footprint('scraped', async (metrics) => {
      text = await fetch(`${metrics}/metrics`).then((r) => r.text());
    });
    for (const family of ['process_resident_memory_bytes gauge', 'nodejs_eventloop_lag_min_seconds gauge'])
      assert.match(text, new RegExp(`^# TYPE ${family}$`, 'm'));
    // The event loop monitor had samples by the first scrape: not 0 and not its empty 2^63 ns.
    const lagMin = Number(/^nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(text)?.[1]);
    assert.ok(lagMin > 0 && lagMin < 10, `nodejs_eventloop_lag_min_seconds ${lagMin}`);
    assert.ok(matching(scraped.loaded, /\/node_modules\/prom-client\//).length > 0);
    assert.deepEqual(matching(scraped.loaded, API_SERVER), []);
    assert.deepEqual(matching(scraped.loaded, UNBUNDLED), []);
  });

  it('loads undici and jose once an ACME Issuer exists', async () => {
    // The premise of the first test: the lazy imports still happen when there is an ACME server to talk to.
    // This one is not listening, so the account registration fails after the key is made and the request sent.
    const acmePort = await freePort();
    const issuer = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'acme', namespace: 'default' },
      spec: {
        acme: {
          server: `https://127.0.0.1:${acmePort}/directory`,
          privateKeySecretRef: { name: 'acme-account' },
          solvers: [{ http01: { ingress: {} } }],
        },
      },
    };
    const created = await callApi(
      join(dir, 'cluster'),
      cluster.url,
      'POST',
      '/apis/cert-manager.io/v1/namespaces/default/issuers',
      issuer,
    );
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const withAcme = await footprint('acme', async () => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { json } = await callApi(
          join(dir, 'cluster'),
          cluster.url,
          'GET',
          '/apis/cert-manager.io/v1/namespaces/default/issuers/acme',
        );
        const conditions = (json.status as { conditions?: { type: string; status: string }[] } | undefined)
          ?.conditions;
        if (conditions?.some((c) => c.type === 'Ready' && c.status === 'False')) return;
        assert.ok(Date.now() < deadline, `the Issuer got no Ready=False: ${JSON.stringify(json.status)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    });
    assert.ok(matching(withAcme.loaded, UNDICI).length > 0, 'undici is loaded for the ACME server');
    assert.ok(matching(withAcme.loaded, JOSE).length > 0, 'jose is loaded for the account key');
    assert.deepEqual(matching(withAcme.loaded, API_SERVER), []);
    // What the ACME Issuer loads lazily comes from the bundle's chunks too.
    assert.deepEqual(matching(withAcme.loaded, UNBUNDLED), []);
  });
});
