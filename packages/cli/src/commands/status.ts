import { stringify } from 'yaml';
import type { Certificate } from '@certkit/certificates/api/types';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import { UsageError } from '../args.ts';
import type { FlagTable } from '../flags.ts';
import { clusterClient, formatTable, parseClusterFlags } from '../cluster-flags.ts';
import { describeCertificate } from './status-certificate.ts';

/** What `certkit status` takes as its first word, as cmctl's `status certificate`, and kubectl's short forms. */
const CERTIFICATE_WORDS = new Set(['certificate', 'certificates', 'cert', 'certs']);

type Output = 'table' | 'wide' | 'json' | 'yaml' | 'name';

function output(value: string | boolean | undefined): Output {
  if (value === undefined) return 'table';
  if (value === 'wide' || value === 'json' || value === 'yaml' || value === 'name') return value;
  throw new UsageError(`--output must be json, yaml, wide or name, got ${JSON.stringify(value)}`);
}

/**
 * `certkit status [certificate [NAME]]`: every Certificate with its readiness, issuer, expiry and renewal
 * time; with a NAME, that one Certificate in detail (cmctl's `status certificate NAME`).
 */
export async function status(args: string[], table: FlagTable): Promise<string> {
  const flags = parseClusterFlags(args, table);
  const format = output(flags.values.output);
  const [kind, name, ...extra] = flags.positionals;
  if (kind !== undefined && !CERTIFICATE_WORDS.has(kind)) {
    // The usual slip is a Certificate's name where the word `certificate` goes: say the command that works.
    throw new UsageError(
      `certkit status shows Certificates; got ${JSON.stringify(kind)}: for one, run "certkit status certificate ${kind}"`,
    );
  }
  if (extra.length > 0) throw new UsageError('certkit status certificate takes one NAME');
  if (name !== undefined && flags.allNamespaces) {
    throw new UsageError('a Certificate NAME cannot be given with --all-namespaces');
  }
  const { client, namespace } = await clusterClient(flags);
  try {
    const certificates = client.resource<Certificate>(certificatesRef);
    if (name !== undefined) {
      const cert = await certificates.get(namespace, name).catch((err: unknown) => {
        throw new Error(`error when getting Certificate resource: ${(err as Error).message}`, { cause: err });
      });
      if (format === 'json') return `${JSON.stringify(cert, null, 2)}\n`;
      if (format === 'yaml') return stringify(cert);
      if (format === 'name') return `certificate.cert-manager.io/${cert.metadata.name}\n`;
      return await describeCertificate(client, cert);
    }
    const list = await certificates.list(flags.allNamespaces ? undefined : namespace);
    // As kubectl prints several objects: a v1 List of them.
    const asList = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: list.items };
    if (format === 'json') return `${JSON.stringify(asList, null, 2)}\n`;
    if (format === 'yaml') return stringify(asList);
    // kubectl's -o name, one resource/name a line; the completion scripts read the names from it.
    if (format === 'name') {
      return list.items.map((c) => `certificate.cert-manager.io/${c.metadata.name}\n`).join('');
    }
    if (list.items.length === 0) {
      // On stderr, as kubectl's "No resources found": stdout stays empty for a script reading the table.
      process.stderr.write(
        flags.allNamespaces
          ? 'No certificates found.\n'
          : `No certificates found in ${namespace} namespace.\n`,
      );
      return '';
    }
    return certificateTable(list.items, format === 'wide');
  } finally {
    client.close();
  }
}

/** The table of Certificates; `wide` adds the Secret, the revision and the Ready condition's reason. */
function certificateTable(items: Certificate[], wide: boolean): string {
  const rows = items.map((cert) => {
    const ready = cert.status?.conditions?.find((c) => c.type === 'Ready');
    const ref = cert.spec?.issuerRef;
    const row = [
      cert.metadata?.namespace ?? '',
      cert.metadata?.name ?? '',
      ready?.status ?? 'Unknown',
      ref ? `${ref.kind ?? 'Issuer'}/${ref.name}` : '',
      cert.status?.notAfter ?? '',
      cert.status?.renewalTime ?? '',
    ];
    if (wide) {
      row.push(cert.spec?.secretName ?? '', String(cert.status?.revision ?? ''), ready?.reason ?? '');
    }
    return row;
  });
  const headers = ['namespace', 'name', 'ready', 'issuer', 'not-after', 'renewal-time'];
  if (wide) headers.push('secret', 'revision', 'reason');
  return formatTable(headers, rows);
}
