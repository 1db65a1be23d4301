import { flushCompileCache } from 'node:module';
import { relative } from 'node:path';
import { parseServeFlags, UsageError } from './args.ts';

// Each command's modules are imported when it runs, not here: `certkit controller` never loads the API server
// (SQLite, the registry, the Kubernetes models: ~20 MB of RSS it would keep for nothing), `certkit renew`
// neither the server nor the controllers.

/**
 * Imports a command's module and writes the compile cache (enabled by bin/certkit.js) right away, so that
 * the next start finds it even when this process ends by SIGKILL; without the cache this does nothing.
 */
async function load<T>(module: Promise<T>): Promise<T> {
  const loaded = await module;
  flushCompileCache();
  return loaded;
}

const USAGE = `usage: certkit <command> [flags]

commands:
  up               the API server and the certificate controller in one process (what npm start runs)
  apiserver        the Kubernetes-compatible API server alone
  controller       the certificate controller against any cluster (--kubeconfig, -n, --leader-elect, ...)
  status           Certificates with readiness, issuer, expiry and renewal time (-n NS | -A)
  renew NAME...    re-issue Certificates now; or --all, or -l/--selector SEL, in -n NS or -A
                   (--kube-api-qps N (50), --kube-api-burst N (100))
  secrets audit    Secrets referenced by issuers or keystores, not labelled for the controller's cache

flags of up and apiserver:
  --data-dir DIR   where state, certificates, the token and the kubeconfig live (default .certkit)
  --port N         port to listen on (default 6443; 0 picks a free one)
  --host ADDR      address to bind (default 127.0.0.1)
  --storage KIND   sqlite (default, in the data dir) or etcd
  --etcd-endpoints URL[,URL...]         etcd members, with --storage etcd
  --watch-cache true|false              serve reads and watches from caches (default true)
  --storage-initialization-timeout D    how long /readyz waits for the caches (default 1m)
  --event-ttl D                         how long Events are kept after their last write (default 1h)
  --max-requests-inflight N             read-only requests served at once, beyond them 429 (400; 0 no limit)
  --max-mutating-requests-inflight N    mutating requests served at once, beyond them 429 (200; 0 no limit)
  --tls-cert-file FILE, --tls-private-key-file FILE
                   serve this certificate (CA after it, as for kube-apiserver) instead of a generated one
  --client-ca-file FILE                 client certificates from this CA authenticate (CN user, O groups)
  --token-auth-file FILE                bearer tokens, as kube-apiserver's: token,user,uid[,"group1,group2"]
                   (replicas on one etcd given the same files accept the same credentials)
  --sqlite-synchronous full|normal      full (default) fsyncs every commit before acknowledging it; normal
                                        is faster but may lose the last writes on a power loss

flags of controller (and, where they apply, up):
  --kubeconfig FILE, --context NAME, -n/--namespace NS
  --kube-api-qps N (20), --kube-api-burst N (50)
  --leader-elect true|false (true), --leader-election-namespace NS (kube-system)
  --metrics-bind-address ADDR (127.0.0.1:9402; 0 disables)
  --cluster-resource-namespace NS (kube-system)
  --default-secret-cleanup-policy Never|OnDelete (Never)
  --enable-certificate-owner-ref true|false (deprecated; wins over the field and the default when given)
  --secrets-filtered-caching true|false (true)
  --concurrent-workers N (5)
  --acme-http01-listen-address ADDR     answer ACME HTTP-01 challenges from the controller itself on ADDR
                                        (:80, 127.0.0.1:8089, [::]:80); off unless given
  --acme-http01-solver-nameservers IP:PORT[,IP:PORT...]
                                        resolve names for the HTTP-01 self-check with these servers only
  --acme-http01-self-check-port N       port of the HTTP-01 self-check's first request (80)
  --max-concurrent-challenges N (60)    ACME Challenges processed at once
  --dns01-recursive-nameservers HOST:PORT|https://URL[,...]
                                        ask these servers in the DNS-01 self-check (default: the system's)
  --dns01-recursive-nameservers-only true|false (false)
                                        ask only those servers, never the zone's authoritative ones
  --dns01-check-retry-period DURATION (10s)
                                        wait between ACME self-checks that have not passed yet
  --dns01-propagation-wait DURATION (60s)
                                        wait after a DNS-01 self-check passed, before accepting the challenge
`;

async function serve(command: 'up' | 'apiserver', args: string[]): Promise<void> {
  const { CONTROLLER_FLAG_OPTIONS, controllerFlags } = await import('./commands/controller-flags.ts');
  const { startControlPlane } = await load(import('./serve.ts'));
  /** Flags of the controller that make sense for the in-process controller of `up`. */
  const UP_CONTROLLER_OPTIONS = {
    ...Object.fromEntries(
      Object.entries(CONTROLLER_FLAG_OPTIONS).filter(
        ([k]) => !k.startsWith('leader-elect') && !k.startsWith('kube-api'),
      ),
    ),
    // One machine, possibly several `up`s: no fixed port unless asked for (the API server has /metrics too).
    'metrics-bind-address': { type: 'string', default: '0' },
  } as const;
  const flags = parseServeFlags(args, command === 'up' ? UP_CONTROLLER_OPTIONS : {});
  // The controller's flags are judged before anything starts, so a mistake is one line and exit 2.
  const defaults = Object.entries(CONTROLLER_FLAG_OPTIONS).map(([k, o]) => [
    k,
    'default' in o ? o.default : undefined,
  ]);
  const settings =
    command === 'up' ? controllerFlags({ ...Object.fromEntries(defaults), ...flags.extra }) : undefined;
  const plane = await startControlPlane(flags);
  const stops: (() => Promise<void>)[] = [];
  if (settings) {
    const { clientRequestMetrics, installCrds, startCertificateController } = await load(
      import('@certkit/certificates/controller'),
    );
    const { defaultRegistry, KubeClient, loadKubeconfig } = await import('@certkit/runtime');
    // The controller talks to its own API server like any client would: through the kubeconfig.
    const metrics = defaultRegistry;
    const client = new KubeClient({
      ...(await loadKubeconfig({ path: plane.kubeconfigPath })),
      qps: -1,
      onRequest: clientRequestMetrics(metrics),
    });
    await installCrds(client);
    const running = startCertificateController(client, { ...settings.options, metrics });
    running.done.catch((err: unknown) => {
      process.stderr.write(
        `certkit: the controller stopped: ${err instanceof Error ? err.message : String(err)}\n`,
      );
      process.exit(1);
    });
    stops.push(async () => {
      await running.stop();
      client.close();
    });
  }
  const kubeconfig = relative(process.cwd(), plane.kubeconfigPath) || plane.kubeconfigPath;
  process.stdout.write(
    `certkit ${command}: API server listening on ${plane.server.url}${command === 'up' ? ' (certificate controller running)' : ''}\n` +
      (settings?.options.acmeHTTP01ListenAddress !== undefined
        ? `  ACME HTTP-01 challenges answered on ${settings.options.acmeHTTP01ListenAddress}\n`
        : '') +
      `  kubeconfig: ${plane.kubeconfigPath}\n` +
      `  try:        kubectl --kubeconfig ${kubeconfig} get namespaces\n` +
      (command === 'up'
        ? `              kubectl --kubeconfig ${kubeconfig} apply -f examples/ && kubectl --kubeconfig ${kubeconfig} get certificates\n`
        : '') +
      `  stop:       Ctrl-C\n`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`certkit: ${signal} received, stopping\n`);
    for (const s of stops) await s();
    await plane.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

function print(text: string): void {
  process.stdout.write(text);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up':
    case 'apiserver':
      return serve(command, rest);
    case 'controller':
      return (await load(import('./commands/controller.ts'))).controller(rest);
    case 'status':
      return print(await (await load(import('./commands/status.ts'))).status(rest));
    case 'renew':
      return (await load(import('./commands/renew.ts'))).renew(rest, {
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    case 'secrets':
      if (rest[0] !== 'audit')
        throw new UsageError('usage: certkit secrets audit [-n NS | -A] [--kubeconfig FILE]');
      return print(await (await load(import('./commands/secrets-audit.ts'))).secretsAudit(rest.slice(1)));
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}; run "certkit help" for the list`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`certkit: ${message.split('\n')[0]}\n`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
