import { hostname } from 'node:os';
import {
  clientRequestMetrics,
  LEADER_ELECTION_ID,
  requireCertManagerApi,
  startCertificateController,
} from '@certkit/certificates/controller';
import { defaultRegistry, jsonLogger, KubeClient, loadClientConfig, namedLogger } from '@certkit/runtime';
import { parseClusterFlags, withUpKubeconfigHint } from '../cluster-flags.ts';
import { type FlagTable, UsageError } from '../flags.ts';
import { controllerListenFlags, withListenErrorInWords } from '../listen-error.ts';
import { logSettings } from '../log-flags.ts';
import { controllerFlags } from './controller-flags.ts';
import { gatewayApiNeeds, requireGatewayApi } from '@certkit/certificates/controllers/shims/gateway-api';
import { leadershipLines } from './leadership-lines.ts';

/**
 * `certkit controller`: the certificate controller against any cluster, until SIGTERM. `table` is its flags in
 * command-table.ts (kubectl's, the controller's, the log flags), the ones its --help prints.
 */
export async function controller(args: string[], table: FlagTable): Promise<void> {
  const flags = parseClusterFlags(args, table);
  if (flags.positionals.length > 0) {
    throw new UsageError(
      `certkit controller takes no arguments, got ${JSON.stringify(flags.positionals[0])}`,
    );
  }
  if (flags.namespace !== undefined && flags.allNamespaces) {
    throw new UsageError('--namespace and --all-namespaces cannot be given together');
  }
  const settings = controllerFlags(flags.values);
  const logs = logSettings(flags.values);
  const config = await loadClientConfig({ path: flags.kubeconfig, context: flags.context }).catch(
    (err: unknown) => {
      throw withUpKubeconfigHint(err, flags);
    },
  );
  const client = new KubeClient({
    ...config,
    qps: settings.qps,
    burst: settings.burst,
    // Requests by verb, resource and code on /metrics, in the registry the controller serves.
    onRequest: clientRequestMetrics(defaultRegistry),
  });
  try {
    await requireCertManagerApi(client);
    const gatewayApi = gatewayApiNeeds(settings.options.controllers);
    if (gatewayApi) await requireGatewayApi(client, gatewayApi);
  } catch (err) {
    client.close();
    throw err;
  }
  const identity = `${hostname()}_${process.pid}`;
  const lease = `${settings.leaderElectionNamespace}/${LEADER_ELECTION_ID}`;
  const leadership = leadershipLines(identity, lease);
  const running = startCertificateController(client, {
    ...settings.options,
    namespace: flags.namespace,
    installSignalHandlers: true,
    releaseMemoryAfterBurst: true,
    // Started with them held back (deploy/deployment.yaml): they run once there is work (docs/adr/1133).
    enableOptimizingCompilersOnFirstWork: true,
    log: namedLogger(jsonLogger(logs.level, process.stderr, logs.verbosity), 'controller'),
    leaderElection: settings.leaderElect
      ? {
          namespace: settings.leaderElectionNamespace,
          identity,
          ...settings.leaderElectionTimings,
          onNewLeader: leadership.observe,
        }
      : undefined,
  });
  // Said once the listeners are bound: a port already taken is then the one line, not this and an error.
  const listenFlags = controllerListenFlags(settings.options);
  try {
    await running.listening;
  } catch (err) {
    running.done.catch(() => {}); // the same error, said once below
    throw withListenErrorInWords(err, listenFlags);
  }
  process.stdout.write(
    `certkit controller: watching ${flags.namespace ? `namespace ${flags.namespace}` : 'all namespaces'} on ${config.server}` +
      (settings.leaderElect ? ` (leader election in ${settings.leaderElectionNamespace})` : '') +
      '\n',
  );
  leadership.bannerPrinted();
  await running.done.catch((err: unknown) => {
    throw withListenErrorInWords(err, listenFlags);
  });
}
