import { isNotFound, type KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { Challenge } from '../../../api/types.ts';
import { DNS01ConfigError } from '../../../acme/dns01/provider.ts';
import type { ControllerContext } from '../../context.ts';
import { CHALLENGES_CONTROLLER } from './controller-name.ts';
import { credentialsNamespace } from './solvers.ts';

/**
 * When a deleted Challenge gives up cleaning up (docs/adr/1016). A failed clean-up keeps the finalizer and is
 * retried, as upstream, so that fixing the Secret lets it finish. One failure cannot be fixed: the
 * credentials are missing and the namespace they are read from is the Challenge's own, which is being
 * deleted. The namespace controller deleted them with everything else, and no Secret can be created in a
 * terminating namespace again, so retrying would hold the namespace Terminating forever. Then the
 * finalizer goes, as upstream did before it started retrying, and a Warning says which TXT record is left
 * in DNS: on the Namespace, where it outlives it (an Event in a terminating namespace is refused, and a
 * cluster-scoped object's Events are in `default`), and in the log.
 */

/** The Challenge's namespace when its clean-up failed for good, else undefined (retry). */
export async function cleanUpAbandonedIn(
  ctx: ControllerContext,
  ch: Challenge,
  failure: unknown,
): Promise<KubeObject | undefined> {
  if (!ch.metadata.deletionTimestamp || !(failure instanceof DNS01ConfigError)) return undefined;
  const namespace = ch.metadata.namespace ?? '';
  if (credentialsNamespace(ctx, ch) !== namespace) return undefined;
  let ns: KubeObject;
  try {
    ns = await ctx.client.resource(builtins.namespaces).get(undefined, namespace);
  } catch (err) {
    // Gone already: nothing holds it, but the Challenge still has to go (it cannot outlive it for long).
    if (isNotFound(err)) return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } };
    throw err;
  }
  return ns.metadata?.deletionTimestamp ? ns : undefined;
}

/** Says, on the Namespace and in the log, that the Challenge's record is left in DNS, and why. */
export function reportAbandonedCleanUp(
  ctx: ControllerContext,
  ch: Challenge,
  ns: KubeObject,
  failure: Error,
): void {
  const name = ns.metadata?.name ?? '';
  const follows = ch.spec.solver.dns01?.cnameStrategy === 'Follow' ? ' (or where its CNAMEs lead)' : '';
  const message =
    `Challenge ${name}/${ch.metadata.name} could not clean up before namespace ${name} went ` +
    `(${failure.message}), so its finalizer was removed: the TXT record "_acme-challenge.${ch.spec.dnsName}."` +
    `${follows} with value "${ch.spec.key}" is left in DNS`;
  ctx.recorder
    .from(CHALLENGES_CONTROLLER)
    .warning({ ...ns, apiVersion: 'v1', kind: 'Namespace' }, 'CleanUpAbandoned', message);
  ctx.log({ level: 'warn', msg: message, namespace: name, challenge: ch.metadata.name });
}
