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
import { describeConnectionError } from '../cluster-errors.ts';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import { TimedOut } from '../exit-status.ts';
import { type FlagTable, UsageError } from '../flags.ts';
import type { Progress } from '../progress.ts';

/**
 * `certkit check api [--wait D] [--interval D]`, as cmctl's: proves the cert-manager API answers by
 * creating, in dry-run, a valid CertificateRequest (the CRDs are served, storage and admission take it),
 * which must come back with its requester recorded (spec.username or spec.uid: cert-manager's mutating
 * webhook ran), then an invalid one, which must be refused with a field error (the validation
 * cert-manager's webhook does; certkit's API server does both in-process). Nothing is stored either way.
 * Once ready, prints cmctl's line; if not, exits 1 with the last reason in one line.
 */

export const READY_LINE = 'The cert-manager API is ready\n';

/** cmctl's ErrMutationWebhookMissing: the API takes CertificateRequests but records no requester in them. */
export const MUTATION_MISSING =
  'the cert-manager mutation webhook did not mutate the dry-run CertificateRequest object';
/**
 * cmctl's ErrMutationWebhookIncorrect: the validation refused the valid request's identity, which is what
 * happens when the validating webhook runs without the mutating one (or after a webhook that changed it).
 */
export const MUTATION_INCORRECT =
  'the cert-manager validating webhook failed because the dry-run CertificateRequest object was mutated incorrectly';

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

/** What a user can act on, in place of the client's raw error (cmctl's TranslateToSimpleError, for certkit). */
export function simpleError(err: unknown, server: string): string {
  const message = (err as Error).message?.split('\n')[0] ?? String(err);
  if (isNotFound(err) && /could not find the requested resource|page not found/i.test(message)) {
    return 'the cert-manager CRDs are not yet installed on the Kubernetes API server';
  }
  return describeConnectionError(err, server) ?? message;
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
  const valid = await requests
    .create(namespace, request('cmapichecker-valid-', csr), { dryRun: true, signal })
    .catch((err: unknown) => {
      if (isInvalid(err) && /identity must be that of the requester/.test((err as Error).message))
        throw new Error(MUTATION_INCORRECT, { cause: err });
      throw err;
    });
  if (!valid.spec?.username && !valid.spec?.uid) throw new Error(MUTATION_MISSING);
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

/**
 * cmctl's `-v` takes an optional level (klog's NoOptDefVal, 2): a bare `-v`, last or before another flag,
 * becomes `--v=2` for the parser, which wants every value.
 */
export function withBareVerbosity(args: readonly string[]): string[] {
  return args.map((arg, i) =>
    (arg === '-v' || arg === '--v') && (i === args.length - 1 || args[i + 1].startsWith('-')) ? '--v=2' : arg,
  );
}

function verbosity(text: string | undefined): number {
  if (text === undefined) return 0;
  if (!/^\d+$/.test(text))
    throw new UsageError(`-v must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

export async function checkApi(args: string[], table: FlagTable, progress?: Progress): Promise<string> {
  const flags = parseClusterFlags(withBareVerbosity(args), table);
  const verbose = verbosity(flags.values.v as string | undefined) >= 2;
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
      // As cmctl's V(2) "Not ready" log: every failed check's reason, not only the last.
      if (verbose) {
        const line = `Not ready (attempt ${attempt}): ${reason}\n`;
        if (progress) progress.print(process.stderr, line);
        else process.stderr.write(line);
      }
      const elapsed = Date.now() - start;
      // A wait that ran out exits 124 as cmctl's (its deadline error); a single check that failed exits 1.
      if (elapsed >= waitMs) throw waitMs > 0 ? new TimedOut(reason) : new Error(reason);
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
