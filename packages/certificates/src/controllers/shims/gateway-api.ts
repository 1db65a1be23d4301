import { isNotFound } from '@certkit/apimachinery';
import type { KubeClient } from '@certkit/runtime';
import { GATEWAY_API_GROUP, GATEWAY_API_VERSION } from './ingress-like.ts';

/**
 * With `--enable-gateway-api`, the controller refuses to start on a cluster that does not serve
 * gateway.networking.k8s.io/v1, as cert-manager does (its discovery check at start): otherwise the Gateway
 * informer would wait forever and /readyz would never say why. CRDs installed later need a restart there too.
 */
export async function requireGatewayApi(client: Pick<KubeClient, 'getJson'>): Promise<void> {
  const groupVersion = `${GATEWAY_API_GROUP}/${GATEWAY_API_VERSION}`;
  const missing =
    'the Gateway API CRDs do not seem to be present, but --enable-gateway-api is set to true. Please install the gateway-api CRDs.';
  let resources: { name: string }[];
  try {
    const list = await client.getJson<{ resources?: { name: string }[] }>(`/apis/${groupVersion}`);
    resources = list.resources ?? [];
  } catch (err) {
    if (isNotFound(err)) throw new Error(`${missing} (${(err as Error).message})`);
    throw new Error(`while checking if the Gateway API CRD is installed: ${(err as Error).message}`);
  }
  if (!resources.some((resource) => resource.name === 'gateways')) {
    throw new Error(`${missing} (found ${resources.length} APIResources in ${groupVersion})`);
  }
}
