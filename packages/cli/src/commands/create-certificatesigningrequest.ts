import { setTimeout as sleep } from 'node:timers/promises';
import { formatGoDuration, parseGoDuration } from '@certkit/apimachinery';
import { isNoKindMatch, type KubeClient } from '@certkit/runtime';
import { GROUP } from '@certkit/certificates/api/constants';
import { applyCertificateDefaults } from '@certkit/certificates/api/defaults';
import { ExperimentalAnnotations } from '@certkit/certificates/api/experimental';
import type { Certificate } from '@certkit/certificates/api/types';
import type { CsrCertificateSigningRequest } from '@certkit/certificates/controllers/certificatesigningrequests/controller';
import { certificateSigningRequestsRef } from '@certkit/certificates/controllers/certificatesigningrequests/index';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  kubeUsageStrings,
} from '@certkit/certificates/pki/index';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import { TimedOut } from '../exit-status.ts';
import { type FlagTable, UsageError } from '../flags.ts';
import {
  certificateFromManifest,
  type CreateOutput,
  readManifest,
  timeout,
  writePrivateFile,
} from './create-certificaterequest.ts';

/**
 * `certkit x create certificatesigningrequest NAME -f FILE`, as cmctl's experimental `x create csr`: a
 * Certificate manifest is the template of a Kubernetes CertificateSigningRequest (certificates.k8s.io/v1) for
 * cert-manager's CSR signers. A private key is generated as the Certificate asks and written to a file (0600);
 * the CSR names the Certificate's issuer as a signer (`issuers.cert-manager.io/<ns>.<name>` or
 * `clusterissuers.cert-manager.io/<name>`, the issuer kind's resource read from discovery so that external
 * issuers work too), and carries its isCA and duration in the experimental.cert-manager.io annotations. With
 * -w it waits (polling each second, up to --timeout) for the certificate, which someone must approve first
 * (`kubectl certificate approve NAME`), and writes it to a file.
 */

type Csr = CsrCertificateSigningRequest;

/** How often the CSR is read back while waiting (cmctl's 1 s). */
const POLL_MS = 1000;

/** The signer name of the Certificate's issuer (cmctl's buildSignerName). */
async function signerNameFor(client: KubeClient, cert: Certificate, namespace: string): Promise<string> {
  const group = cert.spec.issuerRef.group || GROUP;
  const kind = cert.spec.issuerRef.kind || 'Issuer';
  let ref;
  try {
    ref = await client.mapper.mapGroupKind(group, kind);
  } catch (err) {
    if (!isNoKindMatch(err)) throw err;
    throw new Error(
      `failed to build signerName from Certificate: issuer references a resource definition which does not exist group=${group} kind=${kind}`,
      { cause: err },
    );
  }
  const name = cert.spec.issuerRef.name;
  return ref.namespaced
    ? `${ref.resource}.${group}/${namespace}.${name}`
    : `${ref.resource}.${group}/${name}`;
}

/**
 * Whether the CSR has its certificate; throws when it never will (denied or failed), since waiting out the
 * timeout would only hide why (cmctl waits anyway).
 */
export function isCsrSigned(csr: Csr): boolean {
  if (csr.status?.certificate) return true;
  const name = csr.metadata?.name;
  for (const type of ['Denied', 'Failed']) {
    const condition = csr.status?.conditions?.find((c) => c.type === type && c.status === 'True');
    if (condition)
      throw new Error(
        `CertificateSigningRequest ${name} ${type === 'Denied' ? 'was denied' : 'failed'}: ${condition.message || condition.reason}`,
      );
  }
  return false;
}

/** The CSR of the Certificate `cert` for the key's CSR PEM (cmctl's buildCertificateSigningRequest). */
export function certificateSigningRequestFor(
  cert: Certificate,
  name: string,
  csrPem: string,
  signerName: string,
): Csr {
  const annotations: Record<string, string> = {
    ...cert.metadata?.annotations,
    [ExperimentalAnnotations.requestIsCA]: String(cert.spec.isCA ?? false),
  };
  const spec: Csr['spec'] = {
    request: Buffer.from(csrPem).toString('base64'),
    signerName,
    usages: kubeUsageStrings(cert.spec.usages, cert.spec.isCA),
  };
  if (cert.spec.duration) {
    // As Go's Duration.String prints it; expirationSeconds under 600 is the API server's to refuse.
    const ns = parseGoDuration(cert.spec.duration);
    annotations[ExperimentalAnnotations.requestDuration] = formatGoDuration(ns);
    spec.expirationSeconds = Number(ns / 1_000_000_000n);
  }
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name, annotations, ...(cert.metadata?.labels ? { labels: cert.metadata.labels } : {}) },
    spec,
  };
}

export async function createCertificateSigningRequest(
  args: string[],
  table: FlagTable,
  output: CreateOutput,
): Promise<void> {
  const flags = parseClusterFlags(args, table);
  const v = flags.values;
  if (flags.positionals.length !== 1) {
    throw new UsageError(
      flags.positionals.length === 0
        ? 'the name of the CertificateSigningRequest to be created has to be provided as argument'
        : 'only one argument can be passed in: the name of the CertificateSigningRequest',
    );
  }
  const file = v['from-certificate-file'] as string | undefined;
  if (!file) {
    throw new UsageError(
      'the path to a YAML manifest of a Certificate resource cannot be empty, please specify by using --from-certificate-file or -f flag',
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
      'cannot specify file to store certificate if not waiting for and fetching certificate, please set --fetch-certificate or -w flag',
    );
  }
  const timeoutMs = timeout(v.timeout as string);
  const [name] = flags.positionals;

  const cert = certificateFromManifest(await readManifest(file), file);
  const defaulted = applyCertificateDefaults(cert);
  const key = await generatePrivateKey(defaulted.spec.privateKey);
  let csrPem: string;
  try {
    csrPem = await buildCertificateRequest(defaulted.spec, key);
  } catch (err) {
    throw new Error(`error when building CertificateSigningRequest: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const keyFile = keyFlag || `${name}.key`;
  await writePrivateFile(keyFile, encodePrivateKey(key, defaulted.spec.privateKey?.encoding));
  output.err(`Private key written to file ${keyFile}\n`);

  const { client, namespace: flagNamespace } = await clusterClient(flags);
  try {
    // A namespaced issuer is the Certificate's namespace's, else the one of -n or the kubeconfig context.
    const namespace = cert.metadata?.namespace || flagNamespace;
    const signerName = await signerNameFor(client, cert, namespace);
    let built: Csr;
    try {
      built = certificateSigningRequestFor(cert, name, csrPem, signerName);
    } catch (err) {
      throw new Error(`error when building CertificateSigningRequest: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const csrs = client.resource<Csr>(certificateSigningRequestsRef);
    let csr = await csrs.create(undefined, built);
    output.err(`CertificateSigningRequest ${csr.metadata?.name} has been created\n`);
    if (!fetch) return;
    output.err(`CertificateSigningRequest ${name} has not been signed yet. Wait until it is signed...\n`);
    const deadline = Date.now() + timeoutMs;
    while (!isCsrSigned(csr)) {
      if (Date.now() >= deadline) {
        const approved = csr.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True');
        throw new TimedOut(
          `error when waiting for CertificateSigningRequest to be signed: not signed within ${formatGoDuration(BigInt(timeoutMs) * 1_000_000n)}` +
            (approved ? '' : ` (not approved: kubectl certificate approve ${name})`),
        );
      }
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
      try {
        csr = await csrs.get(undefined, name);
      } catch {
        // As cmctl: a failed read is retried until the timeout.
      }
    }
    output.err(`CertificateSigningRequest ${name} has been signed\n`);
    const certFile = certFlag || `${name}.crt`;
    await writePrivateFile(certFile, Buffer.from(csr.status!.certificate!, 'base64'));
    output.err(`Certificate written to file ${certFile}\n`);
  } finally {
    client.close();
  }
}
