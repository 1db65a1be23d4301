import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { builtins } from '@certkit/runtime';
import {
  createNamespace,
  round,
  SHIPPED_CONTROLLER_ENV,
  SHIPPED_CONTROLLER_HEAP_ARGS,
  SHIPPED_CONTROLLER_NODE_ARGS,
  startCluster,
} from './controller-lib.ts';
import { writeResults } from './lib.ts';
import type { Certificate, Issuer } from '../packages/certificates/src/api/types.ts';
import { certificatesRef, issuersRef } from '../packages/certificates/src/controllers/refs.ts';
import { staleBuilds } from '../scripts/build.ts';
import { freePort } from '../packages/testenv/src/net/free-ports.ts';
import { gatewayApiCrdPath } from '../packages/testenv/src/gateway-api/crds.ts';

/**
 * The idle controller on an empty cluster (the cert-manager.io CRDs only): `certkit controller` started
 * through the CLI in a process of its own, its RSS from /proc once it has been idle for a while (the mean of
 * samples over 5 s after 20 s), per variant of how the process is started, against a bare `node` that waits
 * and nothing else. Variants run interleaved, --rounds times, and report the median.
 *
 * Usage: npm run bench:idle [-- --rounds=3 --variants=a,b --results=NAME --baseline=DIR --certificates=N --ingresses=N
 * --listenersets=N]
 * --ingresses=N: the cluster holds N Ingresses that ask for no Certificate (rules, a TLS entry and kubectl's
 * last-applied-configuration, as other teams' Ingresses do): what the ingress-shim's cache costs on a cluster
 * that uses Ingresses (docs/adr/1860; compare with the `-no-ingress-shim` variant).
 * --listenersets=N: the cluster holds one Gateway and N ListenerSets attached to it, none asking for a
 * Certificate (an HTTPS listener each): what the listenerset controller's cache costs (docs/adr/1866; compare
 * the `-listenerset` variant with the `-gateway` one). The Gateway API CRDs are installed when a variant needs
 * them.
 * --certificates=N: the cluster is not empty but holds N ECDSA Certificates of a self-signed Issuer, issued
 * before the rounds by one controller (the first variant's command); each measured controller lists them,
 * reconciles each once at start (nothing to issue), and then idles: the idle figure after a little work.
 * --baseline=DIR adds the shipped variants run from another checkout (built, with its own node_modules: e.g.
 * `git archive COMMIT | tar -x -C DIR && cd DIR && npm ci`), interleaved with this one's, so that a change is
 * measured against what it changes within one run (the machine is noisy). The `-metrics` variants serve
 * /metrics as the Deployment does (port 9402 there, a free loopback port here), not scraped.
 * A variant's name is in ALL below. The compiled-js variant needs --js-root=DIR: a copy of the repo with every
 * packages/<name>/src file compiled to .js beside it and the .ts removed, each package.json's exports and
 * bin/certkit.js pointing at .js, and node_modules/@certkit/<name> linking to that copy's packages (made for
 * bench/results/idle.md with @typescript/native's tsc, `rewriteRelativeImportExtensions` and `noCheck`).
 */

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ROUNDS = Number(flag('rounds') ?? 3);
const RESULTS = flag('results') ?? 'idle';
const JS_ROOT = flag('js-root');
const CERTIFICATES = Number(flag('certificates') ?? 0);
const INGRESSES = Number(flag('ingresses') ?? 0);
const LISTENER_SETS = Number(flag('listenersets') ?? 0);
const BASELINE = flag('baseline');
const SETTLE_MS = 20_000;
const WINDOW_MS = 5_000;
const MB = 1e6;

interface Variant {
  name: string;
  what: string;
  /** The command line after `node`; metricsAddress for --metrics-bind-address, a free loopback port. */
  args(kubeconfig: string, metricsAddress: string): string[];
  env?: Record<string, string>;
  /** Run once before measuring (to fill a cache the variant reads). */
  warm?: boolean;
  /** Needs the Gateway API CRDs (Gateways, ListenerSets) in the cluster. */
  gatewayApi?: boolean;
}

const controllerArgs = (kubeconfig: string, metricsAddress = '0') => [
  'controller',
  '--kubeconfig',
  kubeconfig,
  '--leader-elect=false',
  `--metrics-bind-address=${metricsAddress}`,
];
const cacheDir = await mkdtemp(join(tmpdir(), 'certkit-compile-cache-'));

/** The controller as deploy/deployment.yaml runs it, from checkout `dir`, its metrics endpoint on or off. */
function shipped(name: string, what: string, dir: string, metrics: boolean): Variant[] {
  return [
    {
      name,
      what,
      args: (k, metricsAddress) => [
        ...SHIPPED_CONTROLLER_NODE_ARGS,
        join(dir, 'packages/cli/bin/certkit.js'),
        ...controllerArgs(k, metrics ? metricsAddress : '0'),
      ],
      // Each checkout its own cache: the cache is keyed by file contents, but one directory for two trees
      // would let either evict the other's entries.
      env: {
        NODE_COMPILE_CACHE: dir === root ? cacheDir : `${cacheDir}-baseline`,
        ...SHIPPED_CONTROLLER_ENV,
      },
      warm: true,
    },
  ];
}

/**
 * The cluster's kubeconfig written as JSON beside it (the same data): a controller reading it loads no YAML
 * library, as a pod, which reads its service account and no kubeconfig, loads none (docs/adr/1130).
 */
function jsonKubeconfig(kubeconfig: string): string {
  const json = `${kubeconfig}.json`;
  writeFileSync(json, JSON.stringify(parseYaml(readFileSync(kubeconfig, 'utf8'))));
  return json;
}

/**
 * The floor under any client of the API server (docs/adr/1131): node:tls loaded, one secure context with the
 * kubeconfig's CA (as the runtime's transport makes it), and as many TLS connections each holding a watch as
 * the idle controller holds (one per informer, nine), with node:https and node:http loaded, which the
 * controller's watches use. argv[1]: a JSON kubeconfig with a token.
 */
const TLS_FLOOR_SCRIPT = `
  const tls = process.getBuiltinModule('node:tls');
  const kubeconfig = JSON.parse(process.getBuiltinModule('node:fs').readFileSync(process.argv[1], 'utf8'));
  const { server, 'certificate-authority-data': caData } = kubeconfig.clusters[0].cluster;
  const token = kubeconfig.users[0].user.token;
  const url = new URL(server);
  const secureContext = tls.createSecureContext({ ca: Buffer.from(caData, 'base64').toString() });
  for (let i = 0; i < 9; i++) {
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), secureContext }, () =>
      socket.write('GET /api/v1/namespaces?watch=1 HTTP/1.1\\r\\nHost: ' + url.host +
        '\\r\\nAuthorization: Bearer ' + token + '\\r\\n\\r\\n'));
    socket.on('data', () => {});
    socket.on('error', (err) => { console.error(err.message); process.exit(1); });
  }
  process.getBuiltinModule('node:https');
  process.getBuiltinModule('node:http');
  setInterval(() => {}, 1000);
`;

const ALL: Variant[] = [
  {
    name: 'bare-node',
    what: 'node -e "setInterval(() => {}, 1000)" (the floor)',
    args: () => ['-e', 'setInterval(() => {}, 1000)'],
  },
  {
    name: 'tls-floor-watches',
    what: "node with the shipped flags and environment, one TLS context with the kubeconfig CA, 9 TLS connections each holding a watch, node:https and node:http loaded (what any API client with the controller's watches has)",
    args: (k) => [...SHIPPED_CONTROLLER_NODE_ARGS, '-e', TLS_FLOOR_SCRIPT, jsonKubeconfig(k)],
    env: SHIPPED_CONTROLLER_ENV,
  },
  {
    name: 'main-ts',
    what: 'node packages/cli/src/main.ts controller (TypeScript stripped at every start)',
    args: (k) => [join(root, 'packages/cli/src/main.ts'), ...controllerArgs(k)],
    env: { NODE_COMPILE_CACHE: '', NODE_DISABLE_COMPILE_CACHE: '1', NODE_OPTIONS: '--conditions=source' },
  },
  {
    name: 'bin',
    what: 'packages/cli/bin/certkit.js controller (module compile cache, warm)',
    args: (k) => [join(root, 'packages/cli/bin/certkit.js'), ...controllerArgs(k)],
    env: { NODE_COMPILE_CACHE: cacheDir },
    warm: true,
  },
  {
    name: 'shipped',
    what: `as deploy/deployment.yaml runs it: node ${SHIPPED_CONTROLLER_NODE_ARGS.join(' ')} bin/certkit.js controller, ${Object.entries(
      SHIPPED_CONTROLLER_ENV,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}, warm cache`,
    args: (k) => [
      ...SHIPPED_CONTROLLER_NODE_ARGS,
      join(root, 'packages/cli/bin/certkit.js'),
      ...controllerArgs(k),
    ],
    env: { NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
    warm: true,
  },
  {
    name: 'shipped-json-kubeconfig',
    what: 'shipped, reading the same kubeconfig written as JSON: no YAML library loaded, as in a pod (no kubeconfig there)',
    args: (k) => [
      ...SHIPPED_CONTROLLER_NODE_ARGS,
      join(root, 'packages/cli/bin/certkit.js'),
      ...controllerArgs(jsonKubeconfig(k)),
    ],
    env: { NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
    warm: true,
  },
  {
    name: 'shipped-json-kubeconfig-no-ingress-shim',
    what: 'shipped-json-kubeconfig with --controllers=*,-ingress-shim: no Ingress informer (docs/adr/1860)',
    args: (k) => [
      ...SHIPPED_CONTROLLER_NODE_ARGS,
      join(root, 'packages/cli/bin/certkit.js'),
      ...controllerArgs(jsonKubeconfig(k)),
      '--controllers=*,-ingress-shim',
    ],
    env: { NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
    warm: true,
  },
  // The Gateway API shims (docs/adr/1866): these two variants install the Gateway API CRDs in the cluster.
  ...(
    [
      ['shipped-json-kubeconfig-gateway', 'with --enable-gateway-api=true: the gateway-shim', []],
      [
        'shipped-json-kubeconfig-listenerset',
        'with --enable-gateway-api=true --enable-gateway-api-listenerset=true --feature-gates=ListenerSets=true: the gateway-shim and the listenerset controller',
        ['--enable-gateway-api-listenerset=true', '--feature-gates=ListenerSets=true'],
      ],
    ] as const
  ).map(([name, what, more]) => ({
    name,
    what: `shipped-json-kubeconfig ${what}`,
    args: (k: string) => [
      ...SHIPPED_CONTROLLER_NODE_ARGS,
      join(root, 'packages/cli/bin/certkit.js'),
      ...controllerArgs(jsonKubeconfig(k)),
      '--enable-gateway-api=true',
      ...more,
    ],
    env: { NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
    warm: true,
    gatewayApi: true,
  })),
  ...shipped('shipped-metrics', 'shipped, with the metrics endpoint on (not scraped)', root, true),
  // Which of V8's compilers the idle controller pages in (docs/adr/1133): the JSON-kubeconfig variant (what a
  // pod runs) with the heap flags alone (the compilers on from the start, as shipped before docs/adr/1133),
  // with both or one of the two off for good (the controller's switch is made for --maglev-filter=-*, not
  // --no-maglev: runtime's optimizing-compilers.ts), and with the baseline compiler off as well.
  ...(
    [
      [
        'compilers-at-start',
        [],
        'both optimizing compilers on from the start (shipped before docs/adr/1133)',
      ],
      ['no-maglev-no-turbofan', ['--no-maglev', '--no-turbofan'], 'both off'],
      ['no-maglev', ['--no-maglev'], 'Maglev off, TurboFan on'],
      ['no-turbofan', ['--no-turbofan'], 'TurboFan off, Maglev on'],
      [
        'no-sparkplug',
        ['--no-turbofan', '--maglev-filter=-*', '--no-sparkplug'],
        'shipped, and the baseline compiler (Sparkplug) off too',
      ],
    ] as const
  ).map(([suffix, extra, what]) => ({
    name: `shipped-json-kubeconfig-${suffix}`,
    what: `shipped-json-kubeconfig with node ${[...SHIPPED_CONTROLLER_HEAP_ARGS, ...extra].join(' ')}: ${what}`,
    args: (k: string) => [
      ...SHIPPED_CONTROLLER_HEAP_ARGS,
      ...extra,
      join(root, 'packages/cli/bin/certkit.js'),
      ...controllerArgs(jsonKubeconfig(k)),
    ],
    env: { NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
    warm: true,
  })),
  {
    // What `certkit controller` ran before docs/adr/1130: the compiled main module and the ~250 files it
    // imports, instead of the bundle bin/certkit.js picks for `controller`. NODE_COMPILE_CACHE turns the cache
    // on as bin/certkit.js does.
    name: 'shipped-unbundled',
    what: `shipped flags and environment, running packages/cli/dist/main.js controller (the packages' dist/ files, not the controller bundle), warm cache`,
    args: (k) => [
      ...SHIPPED_CONTROLLER_NODE_ARGS,
      join(root, 'packages/cli/dist/main.js'),
      ...controllerArgs(k),
    ],
    env: { NODE_COMPILE_CACHE: cacheDir, ...SHIPPED_CONTROLLER_ENV },
    warm: true,
  },

  ...(BASELINE
    ? [
        ...shipped('shipped-baseline', `shipped, from the baseline checkout ${BASELINE}`, BASELINE, false),
        ...shipped(
          'shipped-metrics-baseline',
          `shipped-metrics, from the baseline checkout ${BASELINE}`,
          BASELINE,
          true,
        ),
        {
          name: 'shipped-json-kubeconfig-baseline',
          what: `shipped-json-kubeconfig, from the baseline checkout ${BASELINE}`,
          args: (k: string) => [
            ...SHIPPED_CONTROLLER_NODE_ARGS,
            join(BASELINE, 'packages/cli/bin/certkit.js'),
            ...controllerArgs(jsonKubeconfig(k)),
          ],
          env: { NODE_COMPILE_CACHE: `${cacheDir}-baseline`, ...SHIPPED_CONTROLLER_ENV },
          warm: true,
        },
      ]
    : []),
  {
    name: 'bin-cold',
    what: 'packages/cli/bin/certkit.js controller, first start (compile cache empty)',
    args: (k) => [join(root, 'packages/cli/bin/certkit.js'), ...controllerArgs(k)],
    env: { NODE_DISABLE_COMPILE_CACHE: '1' },
  },
  ...(
    [
      [
        'bin-semi-space-1',
        '--max-semi-space-size=1 (MB; young generation kept small)',
        ['--max-semi-space-size=1'],
        {},
      ],
      ['bin-arena-2', 'MALLOC_ARENA_MAX=2 (glibc malloc arenas)', [], { MALLOC_ARENA_MAX: '2' }],
      ['bin-single-threaded', '--single-threaded (no V8 worker threads)', ['--single-threaded'], {}],
      [
        'shipped-no-opt',
        'heap flags (docs/adr/1101) + --no-opt --no-maglev (no optimizing compilers: their code pages in the node binary stay untouched; +20% main-thread CPU in bench:issuance, docs/adr/1113)',
        [...SHIPPED_CONTROLLER_HEAP_ARGS, '--no-opt', '--no-maglev'],
        SHIPPED_CONTROLLER_ENV,
      ],
      [
        'shipped-arena-only',
        'heap flags (docs/adr/1101), MALLOC_ARENA_MAX=2 alone (the environment before docs/adr/1111)',
        SHIPPED_CONTROLLER_HEAP_ARGS,
        { MALLOC_ARENA_MAX: '2' },
      ],
      [
        'shipped-lite',
        'heap flags (docs/adr/1101) + --lite-mode (no optimizing compilers, no feedback vectors until needed)',
        [...SHIPPED_CONTROLLER_HEAP_ARGS, '--lite-mode'],
        SHIPPED_CONTROLLER_ENV,
      ],
      [
        'shipped-no-opt-pool-1',
        'heap flags (docs/adr/1101) + --no-opt --no-maglev --v8-pool-size=1 (one V8 worker thread)',
        [...SHIPPED_CONTROLLER_HEAP_ARGS, '--no-opt', '--no-maglev', '--v8-pool-size=1'],
        SHIPPED_CONTROLLER_ENV,
      ],
      [
        'shipped-no-sparkplug',
        'heap flags (docs/adr/1101) + --no-opt --no-maglev --no-sparkplug (bytecode only, no baseline compiler either)',
        [...SHIPPED_CONTROLLER_HEAP_ARGS, '--no-opt', '--no-maglev', '--no-sparkplug'],
        SHIPPED_CONTROLLER_ENV,
      ],
    ] as const
  ).map(([name, what, nodeArgs, env]) => ({
    name,
    what: `bin/certkit.js controller, warm cache, ${what}`,
    args: (k: string) => [...nodeArgs, join(root, 'packages/cli/bin/certkit.js'), ...controllerArgs(k)],
    env: { NODE_COMPILE_CACHE: cacheDir, ...env },
    warm: true,
  })),
  {
    name: 'compiled-js',
    what: 'the same sources compiled to JavaScript (--js-root), bin/certkit.js controller',
    args: (k) => [join(JS_ROOT ?? '', 'packages/cli/bin/certkit.js'), ...controllerArgs(k)],
    env: { NODE_COMPILE_CACHE: cacheDir },
    warm: true,
  },
];
const wanted = flag('variants')?.split(',');
const VARIANTS = ALL.filter((v) =>
  wanted ? wanted.includes(v.name) : v.name !== 'compiled-js' || JS_ROOT !== undefined,
);

async function rss(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) * 1024;
}

/** CPU seconds (user + system) a process has used, from /proc/PID/stat (clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The variant's mean RSS over the window (MB), and the CPU it used from start to the window's end (s). */
async function measure(variant: Variant, kubeconfig: string): Promise<{ mb: number; cpuS: number }> {
  const child = spawn(process.execPath, variant.args(kubeconfig, `127.0.0.1:${await freePort()}`), {
    stdio: ['ignore', 'ignore', 'inherit'],
    // NODE_OPTIONS cleared: the npm script that runs this bench sets the `source` condition there (.npmrc);
    // the controller runs the compiled dist/, as production does.
    env: { ...process.env, NODE_OPTIONS: '', ...variant.env },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    if (child.exitCode !== null) throw new Error(`${variant.name} exited with ${child.exitCode}`);
    const samples: number[] = [];
    const until = Date.now() + WINDOW_MS;
    while (Date.now() < until) {
      samples.push(await rss(child.pid!));
      await new Promise((r) => setTimeout(r, 200));
    }
    return {
      mb: samples.reduce((a, b) => a + b, 0) / samples.length / MB,
      cpuS: await cpuSeconds(child.pid!),
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** --certificates: N Certificates issued by one controller started as `variant`, which is stopped after. */
async function issueCertificates(variant: Variant): Promise<void> {
  const ns = 'idle';
  await createNamespace(cluster, ns);
  await cluster.admin.resource<Issuer>(issuersRef).create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'self', namespace: ns },
    spec: { selfSigned: {} },
  } as Issuer);
  const certificates = cluster.admin.resource<Certificate>(certificatesRef);
  for (let i = 0; i < CERTIFICATES; i++) {
    await certificates.create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: `c-${i}`, namespace: ns },
      spec: {
        secretName: `c-${i}-tls`,
        dnsNames: [`c-${i}.example`],
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { name: 'self', kind: 'Issuer' },
      },
    } as Certificate);
  }
  const child = spawn(process.execPath, variant.args(cluster.kubeconfigPath, '0'), {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '', ...variant.env },
  });
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { items } = await certificates.list(ns);
      const ready = items.filter((c) =>
        c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
      ).length;
      if (ready === CERTIFICATES) break;
      if (Date.now() > deadline)
        throw new Error(`${ready} of ${CERTIFICATES} Certificates Ready after 120 s`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  process.stderr.write(`[bench:idle] ${CERTIFICATES} Certificates issued\n`);
}

/** --ingresses: N Ingresses without a cert-manager annotation, as `kubectl apply` leaves them. */
async function createIngresses(): Promise<void> {
  const ns = 'idle-ingresses';
  await createNamespace(cluster, ns);
  const ingresses = cluster.admin.resource({
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingresses',
    kind: 'Ingress',
    namespaced: true,
  });
  for (let i = 0; i < INGRESSES; i++) {
    const ingress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: `app-${i}`, namespace: ns, labels: { app: `app-${i}` } },
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: [`app-${i}.example.com`], secretName: `app-${i}-tls` }],
        rules: [
          {
            host: `app-${i}.example.com`,
            http: {
              paths: ['/', '/api', '/static'].map((path) => ({
                path,
                pathType: 'Prefix',
                backend: { service: { name: `app-${i}`, port: { number: 8080 } } },
              })),
            },
          },
        ],
      },
    };
    const annotations = {
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(ingress),
      'nginx.ingress.kubernetes.io/proxy-body-size': '8m',
    };
    await ingresses.create(ns, { ...ingress, metadata: { ...ingress.metadata, annotations } });
  }
  process.stderr.write(`[bench:idle] ${INGRESSES} Ingresses created\n`);
}

/** The Gateway API v1.6.1 standard CRDs of Gateways and ListenerSets, as the tests install them. */
async function installGatewayApi(): Promise<void> {
  const crds = cluster.admin.resource(builtins.customResourceDefinitions);
  for (const resource of ['gateways', 'listenersets'] as const)
    await crds.create(undefined, parseYaml(readFileSync(gatewayApiCrdPath(resource), 'utf8')));
  for (const resource of ['gateways', 'listenersets']) {
    const ref = { group: 'gateway.networking.k8s.io', version: 'v1', resource, kind: '', namespaced: true };
    for (let attempt = 0; ; attempt++) {
      try {
        await cluster.admin.resource(ref).list(undefined, { limit: 1 });
        break;
      } catch (err) {
        if (attempt >= 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

/** --listenersets: one Gateway and N ListenerSets attached to it that ask for no Certificate. */
async function createListenerSets(): Promise<void> {
  const ns = 'idle-listenersets';
  await createNamespace(cluster, ns);
  const ref = (resource: string, kind: string) => ({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    resource,
    kind,
    namespaced: true,
  });
  await cluster.admin.resource(ref('gateways', 'Gateway')).create(ns, {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'shared', namespace: ns },
    spec: {
      gatewayClassName: 'example',
      allowedListeners: { namespaces: { from: 'Same' } },
      listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }],
    },
  });
  const listenerSets = cluster.admin.resource(ref('listenersets', 'ListenerSet'));
  for (let i = 0; i < LISTENER_SETS; i++) {
    await listenerSets.create(ns, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: `team-${i}`, namespace: ns, labels: { team: `team-${i}` } },
      spec: {
        parentRef: { name: 'shared' },
        listeners: [
          {
            name: 'https',
            protocol: 'HTTPS',
            port: 443,
            hostname: `team-${i}.example.com`,
            tls: { mode: 'Terminate', certificateRefs: [{ name: `team-${i}-tls` }] },
          },
        ],
      },
    });
  }
  process.stderr.write(`[bench:idle] ${LISTENER_SETS} ListenerSets created\n`);
}

const stale = staleBuilds();
if (stale.length > 0) throw new Error(`stale or missing build (${stale.join(', ')}): run npm run build`);
const cluster = await startCluster();
const byVariant = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
const cpuByVariant = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
try {
  if (INGRESSES > 0) await createIngresses();
  if (LISTENER_SETS > 0 || VARIANTS.some((v) => v.gatewayApi)) await installGatewayApi();
  if (LISTENER_SETS > 0) await createListenerSets();
  if (CERTIFICATES > 0) await issueCertificates(VARIANTS.find((v) => v.name !== 'bare-node') ?? VARIANTS[0]);
  for (const v of VARIANTS.filter((x) => x.warm)) {
    process.stderr.write(`[bench:idle] warming ${v.name}\n`);
    // Long enough to load every module the controller uses (it writes the cache as soon as they are).
    const child = spawn(process.execPath, v.args(cluster.kubeconfigPath, `127.0.0.1:${await freePort()}`), {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NODE_OPTIONS: '', ...v.env },
    });
    await new Promise((r) => setTimeout(r, 8_000));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of VARIANTS) {
      const { mb, cpuS } = await measure(v, cluster.kubeconfigPath);
      process.stderr.write(`[bench:idle] round ${round + 1}: ${v.name} ${mb.toFixed(1)} MB, ${cpuS} CPU s\n`);
      byVariant.get(v.name)!.push(mb);
      cpuByVariant.get(v.name)!.push(cpuS);
    }
  }
} finally {
  await cluster.stop();
  await rm(cacheDir, { recursive: true, force: true });
  await rm(`${cacheDir}-baseline`, { recursive: true, force: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = VARIANTS.map((v) => ({
  variant: v.name,
  what: v.what,
  env: v.env,
  medianRssMB: round(median(byVariant.get(v.name)!)),
  rssMB: byVariant.get(v.name)!.map((x) => round(x)),
  medianCpuS: round(median(cpuByVariant.get(v.name)!), 2),
  cpuS: cpuByVariant.get(v.name)!,
}));
const table = [
  '| idle `certkit controller`, empty cluster (RSS from /proc, MB = 10⁶ bytes) | median RSS | rounds | target | CPU s to then (median) |',
  '|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.variant}: ${r.what} | ${r.medianRssMB} | ${r.rssMB.join(', ')} | ${r.variant === 'bare-node' ? '—' : `< 64 ${r.medianRssMB < 64 ? '✓' : '✗'}`} | ${r.medianCpuS} |`,
  ),
  '',
  `RSS: the mean of samples over ${WINDOW_MS / 1000} s, ${SETTLE_MS / 1000} s after start; CPU: what the process used from its start to the end of that window (/proc/PID/stat); ${ROUNDS} rounds, variants interleaved; ${availableParallelism()} CPUs.`,
  ...(CERTIFICATES > 0
    ? [
        '',
        `The cluster held ${CERTIFICATES} Ready ECDSA Certificates of a self-signed Issuer (--certificates): each controller reconciled them once at start, then idled.`,
      ]
    : []),
  ...(INGRESSES > 0
    ? [
        '',
        `The cluster held ${INGRESSES} Ingresses asking for no Certificate (--ingresses): rules, a TLS entry and a last-applied-configuration each.`,
      ]
    : []),
].join('\n');
await writeResults(
  RESULTS,
  {
    date: new Date().toISOString(),
    rounds: ROUNDS,
    certificates: CERTIFICATES,
    ingresses: INGRESSES,
    variants: rows,
  },
  table,
);
