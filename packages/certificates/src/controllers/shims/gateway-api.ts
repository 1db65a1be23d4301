import { isNotFound } from '@certkit/apimachinery';
import type { KubeClient } from '@certkit/runtime';
import { GATEWAY_API_GROUP, GATEWAY_API_VERSION } from './ingress-like.ts';
import { SHIM_CONTROLLERS } from './options.ts';

/**
 * Which Gateway API kinds a `--controllers` set needs the cluster to serve before it starts: undefined for
 * none, else whether ListenerSets too.
 */
export function gatewayApiNeeds(
  controllers: ReadonlySet<string> | undefined,
): { listenerSets: boolean } | undefined {
  const listenerSets = controllers?.has(SHIM_CONTROLLERS.ListenerSet) ?? false;
  if (!listenerSets && !controllers?.has(SHIM_CONTROLLERS.Gateway)) return undefined;
  return { listenerSets };
}

/**
 * With `--enable-gateway-api`, the controller refuses to start on a cluster that does not serve
 * gateway.networking.k8s.io/v1, as cert-manager does (its discovery check at start): otherwise the Gateway
 * informer would wait forever and /readyz would never say why. CRDs installed later need a restart there too.
 * With the listenerset controller, the group must serve ListenerSets as well (cert-manager's words, which name
 * the feature gate).
 */
export async function requireGatewayApi(
  client: Pick<KubeClient, 'getJson'>,
  needs: { listenerSets?: boolean } = {},
): Promise<void> {
  const groupVersion = `${GATEWAY_API_GROUP}/${GATEWAY_API_VERSION}`;
  const missing =
    'the Gateway API CRDs do not seem to be present, but --enable-gateway-api is set to true. Please install the gateway-api CRDs.';
  let resources: { name: string; kind?: string }[];
  try {
    const list = await client.getJson<{ resources?: { name: string; kind?: string }[] }>(
      `/apis/${groupVersion}`,
    );
    resources = list.resources ?? [];
  } catch (err) {
    if (isNotFound(err)) throw new Error(`${missing} (${(err as Error).message})`);
    throw new Error(`while checking if the Gateway API CRD is installed: ${(err as Error).message}`);
  }
  if (!resources.some((resource) => resource.name === 'gateways')) {
    throw new Error(`${missing} (found ${resources.length} APIResources in ${groupVersion})`);
  }
  if (needs.listenerSets && !resources.some((resource) => resource.kind === 'ListenerSet')) {
    throw new Error(
      'found GatewayAPI CRDs; however the Gateway API ListenerSet CRD do not seem to be present, but ListenerSets is set to true. Please install the gateway-api ListenerSet CRD.',
    );
  }
}
