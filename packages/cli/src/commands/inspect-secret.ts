import { getCACertificates, rootCertificates } from 'node:tls';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import { type FlagTable, UsageError } from '../flags.ts';
import { formatTlsSecret, type TlsSecretData } from './inspect-secret-format.ts';

/**
 * `certkit inspect secret NAME`, as cmctl's: the certificate in a kubernetes.io/tls Secret, decoded
 * (inspect-secret-format.ts writes the view).
 */

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/** The roots this machine trusts, as cmctl's x509.SystemCertPool (Node before 22.15: its bundled ones). */
function systemRoots(): readonly string[] {
  return typeof getCACertificates === 'function' ? getCACertificates('system') : rootCertificates;
}

export async function inspectSecret(args: string[], table: FlagTable): Promise<string> {
  const flags = parseClusterFlags(args, table);
  if (flags.positionals.length !== 1) {
    throw new UsageError(
      flags.positionals.length === 0
        ? 'the name of the Secret has to be provided as argument'
        : 'only one argument can be passed in: the name of the Secret',
    );
  }
  if (flags.allNamespaces)
    throw new UsageError('certkit inspect secret takes a namespace (-n), not --all-namespaces');
  const [name] = flags.positionals;
  const { client, namespace } = await clusterClient(flags);
  let secret: Secret;
  try {
    secret = await client.resource<Secret>(builtins.secrets).get(namespace, name);
  } catch (err) {
    throw new Error(`error when finding Secret ${JSON.stringify(name)}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    client.close();
  }
  const data: TlsSecretData = {};
  for (const key of ['tls.crt', 'tls.key', 'ca.crt'] as const) {
    const value = secret.data?.[key];
    if (value !== undefined) data[key] = Buffer.from(value, 'base64');
  }
  return formatTlsSecret(data, { now: new Date(), trustedRoots: systemRoots() });
}
