import { hostname } from 'node:os';
import {
  clientRequestMetrics,
  requireCertManagerApi,
  startCertificateController,
} from '@certkit/certificates/controller';
import { defaultRegistry, KubeClient, loadClientConfig } from '@certkit/runtime';
import { parseClusterFlags } from '../cluster-flags.ts';
import { CONTROLLER_FLAG_OPTIONS, controllerFlags } from './controller-flags.ts';

/** `certkit controller`: the certificate controller against any cluster, until SIGTERM. */
export async function controller(args: string[]): Promise<void> {
  const flags = parseClusterFlags(args, CONTROLLER_FLAG_OPTIONS);
  const settings = controllerFlags(flags.values);
  const config = await loadClientConfig({ path: flags.kubeconfig, context: flags.context });
  const client = new KubeClient({
    ...config,
    qps: settings.qps,
    burst: settings.burst,
    // Requests by verb, resource and code on /metrics, in the registry the controller serves.
    onRequest: clientRequestMetrics(defaultRegistry),
  });
  try {
    await requireCertManagerApi(client);
  } catch (err) {
    client.close();
    throw err;
  }
  const running = startCertificateController(client, {
    ...settings.options,
    namespace: flags.namespace,
    installSignalHandlers: true,
    leaderElection: settings.leaderElect
      ? { namespace: settings.leaderElectionNamespace, identity: `${hostname()}_${process.pid}` }
      : undefined,
  });
  process.stdout.write(
    `certkit controller: watching ${flags.namespace ? `namespace ${flags.namespace}` : 'all namespaces'} on ${config.server}` +
      (settings.leaderElect ? ` (leader election in ${settings.leaderElectionNamespace})` : '') +
      '\n',
  );
  await running.done;
}
