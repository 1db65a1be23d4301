import type { ClientConfig } from './config.ts';
import { type InClusterOptions, inClusterConfig } from './in-cluster.ts';
import { type LoadKubeconfigOptions, loadKubeconfig } from './kubeconfig.ts';

/**
 * Where a controller finds its cluster, in controller-runtime's order (pkg/client/config GetConfig): the
 * --kubeconfig flag, else the files in $KUBECONFIG, else the pod's service account when running in a cluster,
 * else ~/.kube/config. So the same command works on a laptop and as a Deployment with no kubeconfig mounted.
 */
export type LoadClientConfigOptions = LoadKubeconfigOptions & Pick<InClusterOptions, 'serviceAccountDir'>;

/**
 * Finds the cluster as controller-runtime's GetConfig does: --kubeconfig, $KUBECONFIG, in-cluster,
 * ~/.kube/config.
 */
export async function loadClientConfig(options: LoadClientConfigOptions = {}): Promise<ClientConfig> {
  const env = options.env ?? process.env;
  if (!options.path && !env.KUBECONFIG && env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    return inClusterConfig({ env, serviceAccountDir: options.serviceAccountDir });
  }
  return loadKubeconfig(options);
}
