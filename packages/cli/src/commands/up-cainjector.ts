import type { KubeClient, Logger } from '@certkit/runtime';
import { namedLogger } from '@certkit/runtime/log';
import { load } from '../load.ts';
import { bool } from './controller-flags.ts';

/** Whether `certkit up --cainjector` (default true) runs the cainjector in the process. */
export function upCAInjector(values: Record<string, string | boolean | undefined>): boolean {
  const value = values.cainjector;
  return value === undefined || bool('cainjector', String(value));
}

/**
 * The cainjector of `certkit up`: under deploy/cainjector-rbac.yaml's ServiceAccount (applied by `admin`), as
 * it runs in a cluster, so webhooks registered with the embedded API server get their caBundle. No leader
 * election (one process) and no metrics listener of its own (the API server has /metrics). Returns its stop.
 */
export async function startUpCAInjector(admin: KubeClient, log: Logger): Promise<() => Promise<void>> {
  const { KubeClient } = await import('@certkit/runtime');
  const { controllerIdentity } = await load(import('@certkit/certificates/identity/controller-identity'));
  const { CAINJECTOR_RBAC_YAML } = await load(import('@certkit/certificates/cainjector/rbac-manifest'));
  const { startCAInjector } = await load(import('@certkit/certificates/cainjector/cainjector'));
  const identity = await controllerIdentity(admin, CAINJECTOR_RBAC_YAML);
  const client = new KubeClient({ ...identity.config, qps: -1 });
  const running = startCAInjector(client, { metricsBindAddress: '0', log: namedLogger(log, 'cainjector') });
  running.done.catch((err: unknown) => {
    process.stderr.write(
      `certkit: the cainjector stopped: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  });
  return async () => {
    await running.stop();
    client.close();
  };
}
