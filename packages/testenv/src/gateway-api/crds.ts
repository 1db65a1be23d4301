import { fileURLToPath } from 'node:url';

/**
 * Where the Gateway API standard CRDs of this directory are (README.md: v1.6.1, unchanged), for tests that
 * install them with `kubectl apply --server-side -f`: the CEL suite and the certificate gateway-shim's and
 * listenerset controller's.
 */
export function gatewayApiCrdPath(
  resource: 'gatewayclasses' | 'gateways' | 'httproutes' | 'listenersets',
): string {
  return fileURLToPath(new URL(`gateway.networking.k8s.io_${resource}.yaml`, import.meta.url));
}
