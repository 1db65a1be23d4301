import { hostname } from 'node:os';
import { startCAInjector } from '@certkit/certificates/cainjector/cainjector';
import { jsonLogger, KubeClient, loadClientConfig, namedLogger } from '@certkit/runtime';
import { parseClusterFlags, withUpKubeconfigHint } from '../cluster-flags.ts';
import { type FlagTable, UsageError } from '../flags.ts';
import { logSettings } from '../log-flags.ts';
import { cainjectorFlags } from './cainjector-flags.ts';

/**
 * `certkit cainjector`: cert-manager's cainjector against any cluster, until SIGTERM. `table` is its flags in
 * command-table.ts (kubectl's, cainjector's, the log flags), the ones its --help prints.
 */
export async function cainjector(args: string[], table: FlagTable): Promise<void> {
  const flags = parseClusterFlags(args, table);
  if (flags.positionals.length > 0) {
    throw new UsageError(
      `certkit cainjector takes no arguments, got ${JSON.stringify(flags.positionals[0])}`,
    );
  }
  if (flags.namespace !== undefined && flags.allNamespaces) {
    throw new UsageError('--namespace and --all-namespaces cannot be given together');
  }
  const settings = cainjectorFlags(flags.values);
  const logs = logSettings(flags.values);
  const config = await loadClientConfig({ path: flags.kubeconfig, context: flags.context }).catch(
    (err: unknown) => {
      throw withUpKubeconfigHint(err, flags);
    },
  );
  const client = new KubeClient(config);
  const running = startCAInjector(client, {
    ...settings.options,
    namespace: flags.namespace,
    installSignalHandlers: true,
    log: namedLogger(jsonLogger(logs.level, process.stderr, logs.verbosity), 'cainjector'),
    leaderElection: settings.leaderElect
      ? {
          namespace: settings.leaderElectionNamespace,
          identity: `${hostname()}_${process.pid}`,
          ...settings.leaderElectionTimings,
        }
      : undefined,
  });
  process.stdout.write(
    `certkit cainjector: injecting CA bundles on ${config.server}` +
      (flags.namespace ? ` from sources in namespace ${flags.namespace}` : '') +
      (settings.leaderElect ? ` (leader election in ${settings.leaderElectionNamespace})` : '') +
      '\n',
  );
  try {
    await running.done;
  } finally {
    client.close();
  }
}
