import type { Certificate } from '@certkit/certificates/api/types';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import { clusterClient, formatTable, parseClusterFlags } from '../cluster-flags.ts';

/** `certkit status`: every Certificate with its readiness, issuer, expiry and renewal time. */
export async function status(args: string[]): Promise<string> {
  const flags = parseClusterFlags(args);
  const { client, namespace } = await clusterClient(flags);
  try {
    const list = await client
      .resource<Certificate>(certificatesRef)
      .list(flags.allNamespaces ? undefined : namespace);
    const rows = list.items.map((cert) => {
      const ready = cert.status?.conditions?.find((c) => c.type === 'Ready');
      const ref = cert.spec?.issuerRef;
      return [
        cert.metadata?.namespace ?? '',
        cert.metadata?.name ?? '',
        ready?.status ?? 'Unknown',
        ref ? `${ref.kind ?? 'Issuer'}/${ref.name}` : '',
        cert.status?.notAfter ?? '',
        cert.status?.renewalTime ?? '',
      ];
    });
    if (rows.length === 0) {
      return flags.allNamespaces
        ? 'No certificates found.\n'
        : `No certificates found in ${namespace} namespace.\n`;
    }
    return formatTable(['namespace', 'name', 'ready', 'issuer', 'not-after', 'renewal-time'], rows);
  } finally {
    client.close();
  }
}
