/**
 * A batch of Certificates for the resilience tests (the API server, etcd or a leader killed mid-issuance): the
 * CRDs, a namespace with a SelfSigned Issuer and `count` ECDSA Certificates, and the checks every such test
 * ends with. Each Certificate keeps up to ten CertificateRequests (revisionHistoryLimit), so that a duplicate
 * request is still there to be counted at the end rather than garbage-collected as history.
 */

import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@certkit/apimachinery';
import { GROUP, Kinds, Labels } from '@certkit/certificates/api/constants';
import type { Certificate, CertificateRequest, Issuer } from '@certkit/certificates/api/types';
import { installCrds } from '@certkit/certificates/controller';
import { certificateRequestsRef, certificatesRef, issuersRef } from '@certkit/certificates/controllers/refs';
import { builtins, type KubeClient } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';

/** Ready for its current generation, and not issuing. */
export function isReady(cert: Certificate): boolean {
  const conditions = cert.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  return (
    ready?.status === 'True' &&
    ready.observedGeneration === cert.metadata.generation &&
    !conditions.some((c) => c.type === 'Issuing')
  );
}

/** Installs the CRDs and waits until they are served. */
export async function installCertificateApi(admin: KubeClient): Promise<void> {
  await installCrds(admin);
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef]) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        await admin.resource(ref).list(undefined, { limit: 1 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(50);
      }
    }
  }
}

/** Namespace `ns`, a SelfSigned Issuer `selfsigned` in it and `count` Certificates `c-000`…, 20 at a time. */
export async function createBatch(admin: KubeClient, ns: string, count: number): Promise<void> {
  await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
  await admin.resource<Issuer>(issuersRef).create(ns, {
    apiVersion: `${GROUP}/v1`,
    kind: Kinds.Issuer,
    metadata: { name: 'selfsigned', namespace: ns },
    spec: { selfSigned: {} },
  } as Issuer);
  const names = Array.from({ length: count }, (_, i) => `c-${String(i).padStart(3, '0')}`);
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(names.slice(i, i + 20).map((name) => createCertificate(admin, ns, name)));
  }
}

/** One ECDSA Certificate of the batch's kind, from the `selfsigned` Issuer, keeping ten requests. */
export async function createCertificate(admin: KubeClient, ns: string, name: string): Promise<void> {
  await admin.resource<Certificate>(certificatesRef).create(ns, {
    apiVersion: `${GROUP}/v1`,
    kind: Kinds.Certificate,
    metadata: { name, namespace: ns },
    spec: {
      secretName: `${name}-tls`,
      commonName: name,
      dnsNames: [`${name}.${ns}.example`],
      privateKey: { algorithm: 'ECDSA', size: 256 },
      issuerRef: { name: 'selfsigned' },
      revisionHistoryLimit: 10,
    },
  } as Certificate);
}

/** How many of the namespace's Certificates are Ready; undefined when the API server does not answer. */
export async function readyCount(admin: KubeClient, ns: string): Promise<number | undefined> {
  try {
    const list = await admin.resource<Certificate>(certificatesRef).list(ns);
    return list.items.filter(isReady).length;
  } catch {
    return undefined;
  }
}

/** Polls until `count` Certificates are Ready or `timeoutMs` passes; returns the last count. */
export async function waitForReady(
  admin: KubeClient,
  ns: string,
  count: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let ready = 0;
  while (Date.now() < deadline) {
    ready = (await readyCount(admin, ns)) ?? ready;
    if (ready >= count) return ready;
    await sleep(200);
  }
  return ready;
}

/**
 * What is wrong with a finished batch, or [] when nothing is: every Certificate Ready at revision 1, with
 * exactly one CertificateRequest (revision 1) owned by it, its Secret there, and no next-private-key Secret
 * left. The next key's clean-up follows Ready asynchronously, so the check is retried for `settleMs`.
 */
export async function batchProblems(admin: KubeClient, ns: string, settleMs = 10_000): Promise<string[]> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const problems = await problemsNow(admin, ns);
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await sleep(250);
  }
}

async function problemsNow(admin: KubeClient, ns: string): Promise<string[]> {
  const problems: string[] = [];
  const certificates = (await admin.resource<Certificate>(certificatesRef).list(ns)).items;
  const requests = (await admin.resource<CertificateRequest>(certificateRequestsRef).list(ns)).items;
  const secrets = (await admin.resource<Secret & KubeObject>(builtins.secrets).list(ns)).items;
  const requestsOf = new Map<string, CertificateRequest[]>();
  for (const cr of requests) {
    const owner = cr.metadata.ownerReferences?.find((r) => r.controller && r.kind === Kinds.Certificate);
    const key = owner?.name ?? `(no owner) ${cr.metadata.name}`;
    requestsOf.set(key, [...(requestsOf.get(key) ?? []), cr]);
  }
  const secretNames = new Set(secrets.map((s) => s.metadata?.name));
  for (const cert of certificates) {
    const name = cert.metadata.name ?? '';
    if (!isReady(cert)) problems.push(`${name} is not Ready`);
    if (cert.status?.revision !== 1) problems.push(`${name} is at revision ${cert.status?.revision}`);
    const own = requestsOf.get(name) ?? [];
    requestsOf.delete(name);
    if (own.length !== 1) problems.push(`${name} has ${own.length} CertificateRequests`);
    if (!secretNames.has(cert.spec.secretName)) problems.push(`${name}: no Secret ${cert.spec.secretName}`);
  }
  for (const [owner, crs] of requestsOf) problems.push(`${crs.length} CertificateRequests of ${owner}`);
  const nextKeys = secrets.filter((s) => s.metadata?.labels?.[Labels.isNextPrivateKeySecret] === 'true');
  if (nextKeys.length)
    problems.push(`next-private-key Secrets left: ${nextKeys.map((s) => s.metadata?.name)}`);
  return problems;
}

/** Resident set size of process `pid` in bytes, from /proc (0 once it has gone). */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return kb === undefined ? 0 : Number(kb) * 1024;
}

/** User + system CPU seconds of process `pid`, from /proc/PID/stat (fields 14 and 15, in 1/100 s ticks). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
