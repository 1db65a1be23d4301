import { readFile } from 'node:fs/promises';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import type { ClientConfig } from './config.ts';
import { tokenFileCredentials } from './token-file.ts';

/**
 * The configuration of a pod's service account, as client-go's rest.InClusterConfig: the API server from
 * KUBERNETES_SERVICE_HOST/PORT, the CA and namespace from the mounted service account directory, and its
 * token re-read every minute because the kubelet rotates it.
 */

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Options of `inClusterConfig`: the environment and the service account directory (tests point them
 * elsewhere).
 */
export interface InClusterOptions {
  /** Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Default /var/run/secrets/kubernetes.io/serviceaccount. */
  serviceAccountDir?: string;
  /** How often the token file is re-read; default one minute. */
  tokenRefreshMs?: number;
}

/**
 * The pod's own cluster config, as client-go's rest.InClusterConfig: the KUBERNETES_SERVICE_HOST and _PORT
 * address, the service account's CA and token (re-read as it rotates) and namespace.
 */
export async function inClusterConfig(options: InClusterOptions = {}): Promise<ClientConfig> {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    );
  }
  const credentials = tokenFileCredentials(join(dir, 'token'), { refreshMs: options.tokenRefreshMs });
  // client-go fails here when the token cannot be read; so do we, rather than at the first request.
  await credentials.get();
  const config: ClientConfig = {
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    credentials,
    namespace: (await readOptional(join(dir, 'namespace')))?.trim() || 'default',
  };
  // client-go only logs a missing CA and goes on with the system roots; we do the same.
  const ca = await readOptional(join(dir, 'ca.crt'));
  if (ca) config.ca = ca;
  return config;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}
