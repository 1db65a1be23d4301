import type { KubeObject } from '@certkit/apimachinery';
import { Annotations } from '@certkit/certificates/api/constants';
import type { Certificate, CertificateRequest, ClusterIssuer, Issuer } from '@certkit/certificates/api/types';
import {
  certificateRequestsRef,
  clusterIssuersRef,
  issuersRef,
} from '@certkit/certificates/controllers/refs';
import { builtins, type KubeClient } from '@certkit/runtime';
import { acmeLines } from './status-acme.ts';
import { secretCertificateLines } from './status-secret-format.ts';

/**
 * `certkit status certificate NAME`: one Certificate and what it hangs on, in one view, as cmctl's `status
 * certificate`: its conditions, names and Events; the Issuer with its conditions; the Secret's certificate
 * (subject, issuer, serial, validity); the CertificateRequest of the issuance in progress, or else of the
 * current revision; for an ACME issuer, that request's Order and Challenges (status-acme.ts). A part that
 * cannot be read says why, and the rest is still shown.
 */
export async function describeCertificate(client: KubeClient, cert: Certificate): Promise<string> {
  const namespace = cert.metadata.namespace ?? '';
  const lines: string[] = [
    `Name: ${cert.metadata.name}`,
    `Namespace: ${namespace}`,
    `Created at: ${cert.metadata.creationTimestamp ?? ''}`,
    ...conditionLines(cert.status?.conditions, ''),
  ];
  const names = [
    ...(cert.spec.dnsNames ?? []).map((n) => ['DNS Names', n]),
    ...(cert.spec.ipAddresses ?? []).map((n) => ['IP Addresses', n]),
    ...(cert.spec.uris ?? []).map((n) => ['URIs', n]),
    ...(cert.spec.emailAddresses ?? []).map((n) => ['Email Addresses', n]),
  ];
  for (const heading of new Set(names.map(([h]) => h))) {
    lines.push(`${heading}:`, ...names.filter(([h]) => h === heading).map(([, n]) => `- ${n}`));
  }
  lines.push(...(await eventLines(client, namespace, cert.metadata.uid, '')));
  lines.push(...(await issuerLines(client, cert)));
  lines.push(...(await secretLines(client, namespace, cert.spec.secretName)));
  lines.push(
    `Not Before: ${cert.status?.notBefore ?? '<none>'}`,
    `Not After: ${cert.status?.notAfter ?? '<none>'}`,
    `Renewal Time: ${cert.status?.renewalTime ?? '<none>'}`,
  );
  const request = await findRequest(client, cert);
  lines.push(...(await requestLines(client, request)));
  lines.push(...(await acmeLines(client, cert, 'request' in request ? request.request : undefined)));
  return `${lines.join('\n')}\n`;
}

/** The fields of a core/v1 Event the view prints. */
interface CoreV1Event extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string };
  reportingComponent?: string;
}

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

function conditionLines(conditions: readonly Condition[] | undefined, indent: string): string[] {
  if (!conditions?.length) return [`${indent}Conditions: <none>`];
  return [
    `${indent}Conditions:`,
    ...conditions.map(
      (c) => `${indent}  ${c.type}: ${c.status}, Reason: ${c.reason ?? ''}, Message: ${c.message ?? ''}`,
    ),
  ];
}

/** The object's Events, by field selector on its UID (as kubectl describe finds them), oldest first. */
async function eventLines(
  client: KubeClient,
  namespace: string,
  uid: string | undefined,
  indent: string,
): Promise<string[]> {
  if (!uid) return [];
  let events: CoreV1Event[];
  try {
    const list = await client
      .resource<CoreV1Event>(builtins.events)
      .list(namespace, { fieldSelector: `involvedObject.uid=${uid}` });
    events = list.items;
  } catch (err) {
    return [`${indent}Events: cannot list them: ${(err as Error).message}`];
  }
  if (events.length === 0) return [`${indent}Events: <none>`];
  const time = (e: CoreV1Event) => e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '';
  events.sort((a, b) => time(a).localeCompare(time(b)));
  const table = [
    ['Type', 'Reason', 'Last Seen', 'From', 'Message'],
    ...events.map((e) => [
      e.type ?? '',
      e.reason ?? '',
      time(e),
      e.source?.component ?? e.reportingComponent ?? '',
      e.message ?? '',
    ]),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  return [
    `${indent}Events:`,
    ...table.map((r) => `${indent}  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd()),
  ];
}

async function issuerLines(client: KubeClient, cert: Certificate): Promise<string[]> {
  const ref = cert.spec.issuerRef;
  const kind = ref.kind ?? 'Issuer';
  const lines = ['Issuer:', `  Name: ${ref.name}`, `  Kind: ${kind}`];
  // What cmctl prints in place of the section when it cannot show the issuer, in its words.
  if ((ref.group || 'cert-manager.io') !== 'cert-manager.io') {
    return [
      `The ${kind} "${ref.name}" is not of the group cert-manager.io, this command currently does not support third party issuers.`,
      `To get more information about "${ref.name}", try 'kubectl describe'`,
    ];
  }
  try {
    const issuer =
      kind === 'ClusterIssuer'
        ? await client.resource<ClusterIssuer>(clusterIssuersRef).get(undefined, ref.name)
        : await client.resource<Issuer>(issuersRef).get(cert.metadata.namespace, ref.name);
    return [
      ...lines,
      ...conditionLines(issuer.status?.conditions, '  '),
      ...(await eventLines(client, issuer.metadata.namespace ?? '', issuer.metadata.uid, '  ')),
    ];
  } catch (err) {
    return [
      `error when getting ${kind === 'ClusterIssuer' ? 'ClusterIssuer' : 'Issuer'}: ${(err as Error).message}`,
    ];
  }
}

async function secretLines(client: KubeClient, namespace: string, name: string): Promise<string[]> {
  const lines = ['Secret:', `  Name: ${name}`];
  let secret: Secret;
  try {
    secret = await client.resource<Secret>(builtins.secrets).get(namespace, name);
  } catch (err) {
    // cmctl's line in place of the section.
    return [`error when finding Secret "${name}": ${(err as Error).message}`];
  }
  const pem = secret.data?.['tls.crt'];
  if (!pem) return [...lines, '  no tls.crt in it'];
  let certificate: string[];
  try {
    certificate = secretCertificateLines(Buffer.from(pem, 'base64'));
  } catch (err) {
    return [...lines, `  tls.crt is not a PEM certificate: ${(err as Error).message}`];
  }
  // cmctl shows the Secret's Events too.
  return [...lines, ...certificate, ...(await eventLines(client, namespace, secret.metadata?.uid, '  '))];
}

/** The request requestLines shows, whether it is the next revision's, or why there is none to show. */
type FoundRequest = { request: CertificateRequest; next: boolean } | { none: string };

/**
 * The CertificateRequest for the next revision (an issuance in progress), else the one of the current
 * revision, found as the controller marks them: owned by the Certificate, with the revision annotation.
 */
async function findRequest(client: KubeClient, cert: Certificate): Promise<FoundRequest> {
  const revision = cert.status?.revision ?? 0;
  let requests: CertificateRequest[];
  try {
    const list = await client
      .resource<CertificateRequest>(certificateRequestsRef)
      .list(cert.metadata.namespace);
    requests = list.items.filter((cr) =>
      cr.metadata.ownerReferences?.some((o) => o.uid === cert.metadata.uid),
    );
  } catch (err) {
    return { none: (err as Error).message };
  }
  const ofRevision = (r: number) =>
    requests.find((cr) => cr.metadata.annotations?.[Annotations.certificateRevision] === String(r));
  const next = ofRevision(revision + 1);
  const current = next ? undefined : revision > 0 ? ofRevision(revision) : undefined;
  const request = next ?? current;
  return request ? { request, next: next !== undefined } : { none: '' };
}

async function requestLines(client: KubeClient, found: FoundRequest): Promise<string[]> {
  if ('none' in found) {
    // cmctl's lines: its error in place of the section, or its sentence for none.
    return found.none
      ? [`error when finding CertificateRequest: ${found.none}`]
      : ['No CertificateRequest found for this Certificate'];
  }
  const { request, next } = found;
  return [
    'CertificateRequest:',
    `  Name: ${request.metadata.name}`,
    `  Namespace: ${request.metadata.namespace}`,
    `  Revision: ${request.metadata.annotations?.[Annotations.certificateRevision]} (${next ? 'issuance in progress' : 'issued the current certificate'})`,
    ...conditionLines(request.status?.conditions, '  '),
    ...(await eventLines(client, request.metadata.namespace ?? '', request.metadata.uid, '  ')),
  ];
}
