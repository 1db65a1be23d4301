import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { convertObject, type ManifestObject } from './convert-versions.ts';
import { formatGoDuration, parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import { applyCertificateDefaults } from '@certkit/certificates/api/defaults';
import type { Certificate, CertificateRequest } from '@certkit/certificates/api/types';
import { certificateRequestsRef } from '@certkit/certificates/controllers/refs';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
} from '@certkit/certificates/pki/index';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import { TimedOut } from '../exit-status.ts';
import { type FlagTable, UsageError } from '../flags.ts';

/**
 * `certkit create certificaterequest NAME --from-certificate-file FILE`, as cmctl's: a Certificate manifest
 * is the template; a private key is generated as the Certificate's spec.privateKey asks and written to a
 * file (0600), and a CertificateRequest named NAME is created with a CSR signed by it. With
 * `--fetch-certificate` the command waits (polling each second, up to --timeout) until the request is
 * signed and writes the certificate to a file. Everything but errors goes to stderr, as cmctl's.
 */

/** How often the request is read back while waiting for its signature (cmctl's 1 s). */
const POLL_MS = 1000;

/**
 * Writes `data` to `path`, owner-only (0600). writeFile's mode applies only to a file it creates: a key
 * written over an existing NAME.key that others may read would stay readable, so the mode is set on the
 * open file before anything is written to it.
 */
export async function writePrivateFile(path: string, data: string | Buffer): Promise<void> {
  const file = await open(path, 'w', 0o600);
  try {
    await file.chmod(0o600);
    await file.writeFile(data);
  } finally {
    await file.close();
  }
}

export interface CreateOutput {
  err(text: string): void;
}

/** The one Certificate in `text` (YAML or JSON), or an error saying why not. */
export function certificateFromManifest(text: string, file: string): Certificate {
  const documents = parseAllDocuments(text).filter((d) => d.contents !== null);
  for (const d of documents) {
    if (d.errors.length > 0) throw new Error(`error parsing ${file}: ${d.errors[0].message.split('\n')[0]}`);
  }
  if (documents.length === 0) {
    throw new Error(
      `no objects found in manifest file ${JSON.stringify(file)}. Expected one Certificate object`,
    );
  }
  if (documents.length > 1) {
    throw new Error(
      `multiple objects found in manifest file ${JSON.stringify(file)}. Expected only one Certificate object`,
    );
  }
  const object = documents[0].toJS() as Partial<Certificate> | null;
  if (object?.kind !== 'Certificate' || !object.apiVersion?.startsWith('cert-manager.io/')) {
    throw new Error(
      `${file} holds ${object?.kind ? `a ${object.kind}` : 'no Kubernetes object'}, not a cert-manager.io Certificate`,
    );
  }
  // An older version (v1alpha2, v1alpha3, v1beta1) is read as cmctl reads it: converted to v1 first.
  let v1: Partial<Certificate>;
  try {
    v1 = convertObject(object as ManifestObject) as Partial<Certificate>;
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
  if (!v1.spec?.issuerRef?.name) throw new Error(`${file}: the Certificate has no spec.issuerRef.name`);
  return v1 as Certificate;
}

export function timeout(text: string): number {
  try {
    const ns = parseGoDuration(text);
    if (ns <= 0n) throw new Error('must be greater than 0s');
    return toMilliseconds(ns);
  } catch (err) {
    throw new UsageError(`invalid --timeout ${JSON.stringify(text)}: ${(err as Error).message}`);
  }
}

/**
 * Whether the request is signed (Ready=True with a certificate); throws when it never will be: a denied or
 * failed request is final, and waiting out the timeout would only hide why (cmctl waits anyway).
 */
export function isSigned(cr: CertificateRequest): boolean {
  const conditions = cr.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready?.status === 'True' && cr.status?.certificate) return true;
  const name = cr.metadata?.name;
  const denied = conditions.find((c) => c.type === 'Denied' && c.status === 'True');
  if (denied) throw new Error(`CertificateRequest ${name} was denied: ${denied.message || denied.reason}`);
  if (ready?.status === 'False' && ready.reason === 'Failed') {
    throw new Error(`CertificateRequest ${name} failed: ${ready.message ?? ''}`);
  }
  return false;
}

export async function createCertificateRequest(
  args: string[],
  table: FlagTable,
  output: CreateOutput,
): Promise<void> {
  const flags = parseClusterFlags(args, table);
  const v = flags.values;
  if (flags.positionals.length !== 1) {
    throw new UsageError(
      flags.positionals.length === 0
        ? 'the name of the CertificateRequest to be created has to be provided as argument'
        : 'only one argument can be passed in: the name of the CertificateRequest',
    );
  }
  if (flags.allNamespaces)
    throw new UsageError('certkit create certificaterequest takes a namespace (-n), not --all-namespaces');
  const file = v['from-certificate-file'] as string | undefined;
  if (!file) {
    throw new UsageError(
      'the path to a YAML manifest of a Certificate resource cannot be empty, please specify by using --from-certificate-file flag',
    );
  }
  const keyFlag = v['output-key-file'] as string | undefined;
  const certFlag = v['output-certificate-file'] as string | undefined;
  const fetch = v['fetch-certificate'] === true;
  if (keyFlag && certFlag && keyFlag === certFlag) {
    throw new UsageError('the file to store private key cannot be the same as the file to store certificate');
  }
  if (!fetch && certFlag) {
    throw new UsageError(
      'cannot specify file to store certificate if not waiting for and fetching certificate, please set --fetch-certificate flag',
    );
  }
  const timeoutMs = timeout(v.timeout as string);
  const [name] = flags.positionals;

  const cert = certificateFromManifest(await readManifest(file), file);
  // The key and the CSR as the controller makes them for this Certificate: from its defaulted spec.
  const defaulted = applyCertificateDefaults(cert);
  const key = await generatePrivateKey(defaulted.spec.privateKey);
  let csr: string;
  try {
    csr = await buildCertificateRequest(defaulted.spec, key);
  } catch (err) {
    throw new Error(`error when building CertificateRequest: ${(err as Error).message}`, { cause: err });
  }
  const keyFile = keyFlag || `${name}.key`;
  await writePrivateFile(keyFile, encodePrivateKey(key, defaulted.spec.privateKey?.encoding));
  output.err(`Private key written to file ${keyFile}\n`);

  const { client, namespace: flagNamespace } = await clusterClient(flags);
  try {
    const requests = client.resource<CertificateRequest>(certificateRequestsRef);
    const namespace = cert.metadata?.namespace || flagNamespace;
    // The request's own fields are the stored Certificate's, as cmctl and the controller copy them.
    let cr = await requests.create(namespace, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'CertificateRequest',
      metadata: { name, annotations: cert.metadata?.annotations, labels: cert.metadata?.labels },
      spec: {
        request: Buffer.from(csr).toString('base64'),
        duration: cert.spec.duration,
        issuerRef: cert.spec.issuerRef,
        isCA: cert.spec.isCA,
        usages: cert.spec.usages,
      },
    } as CertificateRequest);
    output.err(
      `CertificateRequest ${cr.metadata.name} has been created in namespace ${cr.metadata.namespace}\n`,
    );
    if (!fetch) return;
    output.err(
      `CertificateRequest ${cr.metadata.name} in namespace ${cr.metadata.namespace} has not been signed yet. Wait until it is signed...\n`,
    );
    const deadline = Date.now() + timeoutMs;
    while (!isSigned(cr)) {
      const ready = cr.status?.conditions?.find((c) => c.type === 'Ready');
      if (Date.now() >= deadline) {
        throw new TimedOut(
          `error when waiting for CertificateRequest to be signed: not signed within ${formatGoDuration(BigInt(timeoutMs) * 1_000_000n)}` +
            (ready ? ` (Ready=${ready.status} ${ready.reason ?? ''}: ${ready.message ?? ''})` : ''),
        );
      }
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
      try {
        cr = await requests.get(namespace, name);
      } catch {
        // As cmctl: a failed read is retried until the timeout.
      }
    }
    output.err(`CertificateRequest ${name} in namespace ${namespace} has been signed\n`);
    const certFile = certFlag || `${name}.crt`;
    await writePrivateFile(certFile, Buffer.from(cr.status!.certificate!, 'base64'));
    output.err(`Certificate written to file ${certFile}\n`);
  } finally {
    client.close();
  }
}

/** The manifest's text; a file that cannot be read is one line naming the flag and the cause in words. */
export async function readManifest(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    const words: Record<string, string> = {
      ENOENT: 'no such file',
      EISDIR: 'is a directory, not a file',
      EACCES: 'permission denied',
    };
    const cause = code && words[code] ? `${words[code]} (${code})` : message;
    throw new Error(`--from-certificate-file ${file}: ${cause}`, { cause: err });
  }
}
