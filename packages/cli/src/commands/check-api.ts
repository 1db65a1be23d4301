import { setTimeout as sleep } from 'node:timers/promises';
import {
  formatGoDuration,
  isInvalid,
  isNotFound,
  parseGoDuration,
  toMilliseconds,
} from '@certkit/apimachinery';
import type { CertificateRequest } from '@certkit/certificates/api/types';
import { certificateRequestsRef } from '@certkit/certificates/controllers/refs';
import { buildCertificateRequest, generatePrivateKey } from '@certkit/certificates/pki/index';
import type { KubeClient } from '@certkit/runtime';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import { type FlagTable, UsageError } from '../flags.ts';
import type { Progress } from '../progress.ts';

/**
 * `certkit check api [--wait D] [--interval D]`, as cmctl's: proves the cert-manager API answers by
 * creating, in dry-run, a valid CertificateRequest (the CRDs are served, storage and admission take it),
 * then an invalid one, which must be refused with a field error (the validation cert-manager's webhook does,
 * certkit's API server does in-process). Nothing is stored either way. Once ready, prints cmctl's line; if
 * not, exits 1 with the last reason in one line.
 */

export const READY_LINE = 'The cert-manager API is ready\n';

/** A request may not hang a check past this (nor past the interval): the next try says more. */
const MAX_CHECK_MS = 10_000;

function duration(flag: string, text: string): number {
  try {
    const ns = parseGoDuration(text);
    if (ns < 0n) throw new Error('must not be negative');
    return toMilliseconds(ns);
  } catch (err) {
    throw new UsageError(`invalid --${flag} ${JSON.stringify(text)}: ${(err as Error).message}`);
  }
}

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (
    let e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
    e;
    e = e.cause as typeof e
  ) {
    if (typeof e.code === 'string') codes.push(e.code);
    for (const inner of e.errors ?? []) codes.push(...errorCodes(inner));
  }
  return codes;
}

/** What a user can act on, in place of the client's raw error (cmctl's TranslateToSimpleError, for certkit). */
export function simpleError(err: unknown, server: string): string {
  const message = (err as Error).message?.split('\n')[0] ?? String(err);
  if (isNotFound(err) && /could not find the requested resource|page not found/i.test(message)) {
    return 'the cert-manager CRDs are not yet installed on the Kubernetes API server';
  }
  const codes = errorCodes(err);
  if (codes.includes('ECONNREFUSED'))
    return `the API server at ${server} refused the connection: is it running?`;
  if (codes.some((c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN'))
    return `the API server's host in ${server} cannot be resolved`;
  if (codes.some((c) => /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(c))) {
    return `the API server's certificate is not trusted: ${message}`;
  }
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `the API server at ${server} did not answer in time`;
  }
  return message;
}

function request(generateName: string, csr: string): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { generateName },
    spec: { issuerRef: { name: 'cmapichecker' }, request: csr },
  } as CertificateRequest;
}

/** One check; resolves when the API is ready, throws the reason it is not. */
export async function checkOnce(
  client: KubeClient,
  namespace: string,
  csr: string,
  timeoutMs: number,
): Promise<void> {
  const requests = client.resource<CertificateRequest>(certificateRequestsRef);
  const signal = AbortSignal.timeout(timeoutMs);
  await requests.create(namespace, request('cmapichecker-valid-', csr), { dryRun: true, signal });
  try {
    await requests.create(
      namespace,
      request('cmapichecker-invalid-', Buffer.from('invalid-csr').toString('base64')),
      { dryRun: true, signal },
    );
  } catch (err) {
    if (isInvalid(err)) return;
    throw err;
  }
  throw new Error(
    'the cert-manager API accepted an invalid CertificateRequest: its validation is not running',
  );
}

export async function checkApi(args: string[], table: FlagTable, progress?: Progress): Promise<string> {
  const flags = parseClusterFlags(args, table);
  if (flags.positionals.length > 0) throw new UsageError('certkit check api takes no arguments');
  if (flags.allNamespaces)
    throw new UsageError('certkit check api takes a namespace (-n), not --all-namespaces');
  const waitMs = duration('wait', flags.values.wait as string);
  const intervalMs = duration('interval', flags.values.interval as string);
  if (intervalMs <= 0) throw new UsageError('--interval must be greater than 0s');
  // The valid request carries a real CSR (ECDSA P-521, as cmctl's), made once.
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 521 });
  const csr = Buffer.from(await buildCertificateRequest({ commonName: 'cmapichecker' }, key)).toString(
    'base64',
  );
  const { client, namespace } = await clusterClient(flags);
  const server = client.config.server;
  const start = Date.now();
  try {
    for (let attempt = 1; ; attempt++) {
      let reason: string;
      try {
        await checkOnce(client, namespace, csr, Math.min(MAX_CHECK_MS, Math.max(intervalMs, 1000)));
        return READY_LINE;
      } catch (err) {
        reason = simpleError(err, server);
      }
      const elapsed = Date.now() - start;
      if (elapsed >= waitMs) throw new Error(reason);
      progress?.update(
        `Waiting for the cert-manager API (${formatGoDuration(BigInt(Math.floor(elapsed / 1000)) * 1_000_000_000n)} of ` +
          `${formatGoDuration(BigInt(waitMs) * 1_000_000n)}, attempt ${attempt}): ${reason}`,
        { force: true },
      );
      await sleep(Math.min(intervalMs, waitMs - elapsed));
    }
  } finally {
    progress?.done();
    client.close();
  }
}
