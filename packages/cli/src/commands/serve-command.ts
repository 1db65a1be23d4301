import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLogger, namedLogger } from '@certkit/runtime/log';
import { parseServeFlags } from '../args.ts';
import { type FlagTable, flagDefaults } from '../flags.ts';
import { load } from '../load.ts';
import { controllerListenFlags, describeListenError, withListenErrorInWords } from '../listen-error.ts';
import { logSettings } from '../log-flags.ts';
import { startUpCAInjector, upCAInjector } from './up-cainjector.ts';
import { onPath } from '../on-path.ts';
import { shellQuote } from '../shell-quote.ts';
import { holdControllerLease } from '../up-controller-lease.ts';
import { CONTROLLER_FLAG_OPTIONS } from './controller-flag-table.ts';

/**
 * The examples directory as the user can name it from where they run `up`: `examples/` in a checkout, the
 * repository's from elsewhere (relative to the working directory), none when certkit was installed without it.
 */
function examplesDir(): string | undefined {
  const shipped = fileURLToPath(new URL('../../../../examples/', import.meta.url));
  if (!existsSync(join(shipped, '01-selfsigned-issuer.yaml'))) return undefined;
  return `${shortPath(shipped).replace(/\/$/, '')}/`;
}

/** `path` relative to the working directory when it is below it, else absolute: what a user types. */
function shortPath(path: string): string {
  const inside = relative(process.cwd(), path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}

/**
 * `certkit up` and `certkit apiserver`: the API server, with the certificate controller for `up`. `table` is
 * the command's flags in command-table.ts, the ones its --help prints: the API server's, the log flags, and for
 * `up` the in-process controller's.
 */
export async function serve(command: 'up' | 'apiserver', args: string[], table: FlagTable): Promise<void> {
  const { controllerFlags } = await import('./controller-flags.ts');
  const { startControlPlane } = await load(import('../serve.ts'));
  const flags = parseServeFlags(args, table);
  // The flags are judged before anything starts, so a mistake is one line and exit 2.
  const logs = logSettings(flags.extra);
  const log = jsonLogger(logs.level, process.stderr, logs.verbosity);
  const settings =
    command === 'up'
      ? controllerFlags({ ...flagDefaults(CONTROLLER_FLAG_OPTIONS), ...flags.extra })
      : undefined;
  const withCAInjector = command === 'up' && upCAInjector(flags.extra);
  const plane = await startControlPlane(flags, namedLogger(log, 'apiserver'));
  const stops: (() => Promise<void>)[] = [];
  if (settings) {
    const { clientRequestMetrics, installCrds, LEADER_ELECTION_ID, startCertificateController } = await load(
      import('@certkit/certificates/controller'),
    );
    const { defaultRegistry, KubeClient, loadKubeconfig } = await import('@certkit/runtime');
    const { controllerIdentity } = await load(import('@certkit/certificates/identity/controller-identity'));
    const { CONTROLLER_RBAC_YAML } = await load(import('@certkit/certificates/identity/rbac-manifest'));
    // The admin installs the CRDs and deploy/rbac.yaml, then requests the ServiceAccount's tokens.
    const admin = new KubeClient({ ...(await loadKubeconfig({ path: plane.kubeconfigPath })), qps: -1 });
    await installCrds(admin);
    const { gatewayApiNeeds, requireGatewayApi } = await load(
      import('@certkit/certificates/controllers/shims/gateway-api'),
    );
    const gatewayApi = gatewayApiNeeds(settings.options.controllers);
    // The Gateway CRDs persist in the data dir: installed once, they are there at the next start.
    if (gatewayApi) await requireGatewayApi(admin, gatewayApi);
    // The controller runs under its own identity, as it would in a cluster: deploy/rbac.yaml's
    // ServiceAccount, so every request it makes is authorised by the roles users deploy.
    const identity = await controllerIdentity(admin, CONTROLLER_RBAC_YAML);
    const metrics = defaultRegistry;
    const client = new KubeClient({
      ...identity.config,
      qps: -1,
      onRequest: clientRequestMetrics(metrics),
    });
    const running = startCertificateController(client, {
      ...settings.options,
      metrics,
      log: namedLogger(log, 'controller'),
    });
    // The banner below waits for the controller's listeners: a port already taken is one line and exit 1
    // (main prints it), not a banner and then an error.
    const listenFlags = controllerListenFlags(settings.options);
    try {
      await running.listening;
    } catch (err) {
      running.done.catch(() => {}); // the same error, said once below
      throw withListenErrorInWords(err, listenFlags);
    }
    running.done.catch((err: unknown) => {
      const line = describeListenError(err, listenFlags);
      process.stderr.write(
        `certkit: ${line ?? `the controller stopped: ${err instanceof Error ? err.message : String(err)}`}\n`,
      );
      process.exit(1);
    });
    if (withCAInjector) stops.push(await startUpCAInjector(admin, log));
    // SQLite: this process is the cluster, so its controller is the cluster's; a `certkit controller` pointed
    // here stands by on the Lease instead of running beside it. (With etcd, `up` replicas share the data and
    // each runs its controller, as before: docs/adr/1895-up-holds-the-controller-lease.md.)
    const lease =
      flags.storage === 'sqlite'
        ? await holdControllerLease(
            admin,
            String(CONTROLLER_FLAG_OPTIONS['leader-election-namespace'].default),
            LEADER_ELECTION_ID,
          )
        : undefined;
    stops.push(async () => {
      await lease?.release();
      await running.stop();
      client.close();
      admin.close();
    });
  }
  // Installed before the banner: whoever reads it may signal at once (a script, a test), and a signal that
  // came before the handlers would end the process by its default action, without the clean stop.
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      // Node's convention: a second signal means the operator will not wait for a clean stop (one slowed by a
      // busy database, say). The data dir is safe: SQLite's journal and the kernel's lock survive an exit.
      process.stderr.write(`certkit: ${signal} received again, exiting without waiting for the stop\n`);
      // Not process.exit(): it joins the SQLite writer thread, which finishes its statement first (a busy wait
      // on a locked database lasts seconds). The signal's own default action ends the process now, and the
      // shell sees it as ended by that signal (130 for Ctrl-C).
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    stopping = true;
    process.stdout.write(`certkit: ${signal} received, stopping (again to exit at once)\n`);
    for (const s of stops) await s();
    await plane.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // Quoted as the shell needs them, so that the commands can be pasted whatever the paths hold.
  const kubeconfig = shellQuote(shortPath(plane.kubeconfigPath));
  const examplesPath = examplesDir();
  const examples = examplesPath === undefined ? undefined : shellQuote(examplesPath);
  process.stdout.write(
    `certkit ${command}: API server listening on ${plane.server.url}${command === 'up' ? ` (certificate controller running${withCAInjector ? ', with the cainjector' : ''})` : ''}\n` +
      (settings?.options.acmeHTTP01ListenAddress !== undefined
        ? `  ACME HTTP-01 challenges answered on ${settings.options.acmeHTTP01ListenAddress}\n`
        : '') +
      `  kubeconfig: ${plane.kubeconfigPath}\n` +
      `  try:        kubectl --kubeconfig ${kubeconfig} get namespaces\n` +
      (command === 'up'
        ? `              ${examples ? `kubectl --kubeconfig ${kubeconfig} apply -f ${examples} && ` : ''}kubectl --kubeconfig ${kubeconfig} get certificates\n`
        : '') +
      // A new user may not have kubectl yet: the commands above would only say "command not found".
      (onPath('kubectl')
        ? ''
        : '              (kubectl is not on PATH: install it from https://kubernetes.io/docs/tasks/tools/)\n') +
      `  stop:       Ctrl-C\n`,
  );
}
