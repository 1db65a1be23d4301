/**
 * Unit-test support for the Certificate sub-controllers: a ControllerContext built as in production
 * (createControllerContext: the same informers, indices and split Secret cache) on runtime's in-memory
 * FakeClient instead of an API server, seeded with the objects of one table row; and builders for those
 * objects (Certificates, their Secrets, next-key Secrets and CertificateRequests, with real keys and
 * certificates). A reconcile runs once, on the caches as seeded; the test then reads what it wrote.
 */

import type { KeyObject } from 'node:crypto';
import { formatTime, type KubeObject } from '@certkit/apimachinery';
import { builtins, type Reconciler, type Request, type Result, silentLogger } from '@certkit/runtime';
import { type FakeAction, FakeClient } from '@certkit/runtime/client/fake/index';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Annotations, Labels } from '@certkit/certificates/api/constants';
import type {
  Certificate,
  CertificateCondition,
  CertificateRequest,
  CertificateRequestCondition,
  CertificateSpec,
  CertificateStatus,
  Issuer,
} from '@certkit/certificates/api/types';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  signCertificate,
} from '@certkit/certificates/pki/index';
import type { ControllerContext, ControllerOptions } from '@certkit/certificates/controllers/context';
import { createControllerContext, startContext } from '@certkit/certificates/controllers/create-context';
import {
  certificateRequestsRef,
  certificatesRef,
  clusterIssuersRef,
  issuersRef,
} from '@certkit/certificates/controllers/refs';
import { requestObject } from '@certkit/certificates/controllers/certificates/requestmanager/requestmanager';
import { certificateOwnerReference } from '@certkit/certificates/controllers/certificates/shared/owner-reference';

export const NAMESPACE = 'apps';
export const HOUR = 60 * 60 * 1000;
/** When the test certificates were issued; `NOW` is an hour later, well within their three hours. */
export const ISSUED_AT = new Date('2026-03-01T00:00:00Z');
export const NOW = new Date(ISSUED_AT.getTime() + HOUR);

const b64 = (text: string) => Buffer.from(text).toString('base64');
export { formatTime };

export const BASE_SPEC: CertificateSpec = {
  secretName: 'web-tls',
  issuerRef: { name: 'ca' },
  dnsNames: ['web.example'],
  privateKey: { algorithm: 'ECDSA' },
  duration: '3h',
};

export function certificate(
  spec: Partial<CertificateSpec> = {},
  status?: CertificateStatus,
  name = 'web',
): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: `uid-${name}`,
      generation: 1,
      creationTimestamp: formatTime(ISSUED_AT),
    },
    spec: { ...BASE_SPEC, secretName: `${name}-tls`, ...spec },
    ...(status ? { status } : {}),
  };
}

/** A condition as the controllers write it, at `at`. */
export function condition(
  type: CertificateCondition['type'],
  status: CertificateCondition['status'],
  reason: string,
  message = '',
  at = ISSUED_AT,
): CertificateCondition {
  return { type, status, reason, message, lastTransitionTime: formatTime(at), observedGeneration: 1 };
}

export interface KeyPair {
  key: KeyObject;
  csrPem: string;
  certPem: string;
}

/** A key, a CSR for the spec and a certificate for it (self-signed, three hours from `at`). */
export async function keyPair(
  spec: CertificateSpec = BASE_SPEC,
  at = ISSUED_AT,
  key?: KeyObject,
): Promise<KeyPair> {
  key ??= await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await buildCertificateRequest(spec, key);
  const { certPem } = await signCertificate({
    csrPem,
    duration: 3 * HOUR,
    isCA: false,
    issuer: { selfSignedKey: key },
    now: at,
  });
  return { key, csrPem, certPem };
}

/** The Certificate's Secret as the issuing controller writes it (labelled, annotated), holding `pair`. */
export function tlsSecret(
  cert: Certificate,
  pair: KeyPair | undefined,
  annotations: Record<string, string> = {},
): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: cert.spec.secretName,
      namespace: NAMESPACE,
      labels: { [Labels.partOfCertManagerController]: 'true' },
      annotations: {
        [Annotations.certificateName]: cert.metadata.name ?? '',
        [Annotations.issuerName]: cert.spec.issuerRef.name,
        [Annotations.issuerKind]: 'Issuer',
        [Annotations.issuerGroup]: 'cert-manager.io',
        ...annotations,
      },
    },
    type: 'kubernetes.io/tls',
    data: pair ? { 'tls.key': b64(encodePrivateKey(pair.key, 'PKCS8')), 'tls.crt': b64(pair.certPem) } : {},
  };
}

/** A next-private-key Secret as the key manager makes it, owned by the Certificate. */
export function nextKeySecret(cert: Certificate, name: string, key: KeyObject | undefined): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: NAMESPACE,
      ownerReferences: [certificateOwnerReference(cert)],
      labels: { [Labels.isNextPrivateKeySecret]: 'true', [Labels.partOfCertManagerController]: 'true' },
    },
    data: key ? { 'tls.key': b64(encodePrivateKey(key, 'PKCS8')) } : {},
  };
}

/** The request the request manager makes for `revision`, with `status` as its signer left it. */
export function certificateRequest(
  cert: Certificate,
  revision: number,
  csrPem: string,
  status?: CertificateRequest['status'],
  keySecretName = `${cert.metadata.name}-next`,
): CertificateRequest {
  const cr = requestObject(cert, revision, keySecretName, csrPem);
  return status ? { ...cr, status } : cr;
}

export function requestCondition(
  type: string,
  status: CertificateRequestCondition['status'],
  reason: string,
  message = '',
): CertificateRequestCondition {
  return { type, status, reason, message, lastTransitionTime: formatTime(ISSUED_AT) };
}

/** A signed request's status: Ready=True Issued with the certificate. */
export function issuedStatus(pair: KeyPair): CertificateRequest['status'] {
  return {
    certificate: b64(pair.certPem),
    ca: b64(pair.certPem),
    conditions: [requestCondition('Ready', 'True', 'Issued', 'Certificate fetched from issuer successfully')],
  };
}

export interface Seed {
  certificates?: Certificate[];
  requests?: CertificateRequest[];
  secrets?: Secret[];
  issuers?: Issuer[];
}

export interface FakeEnvironmentOptions extends Partial<ControllerOptions> {
  now?: Date;
}

/** An Event the controller recorded: `Type Reason: message`, as `kubectl describe` shows them. */
export type RecordedEvent = string;

export class FakeEnvironment {
  readonly client: FakeClient;
  readonly ctx: ControllerContext;
  readonly #abort = new AbortController();

  private constructor(client: FakeClient, ctx: ControllerContext) {
    this.client = client;
    this.ctx = ctx;
  }

  /** A context on an in-memory client holding `seed`, its caches synced. */
  static async start(seed: Seed, options: FakeEnvironmentOptions = {}): Promise<FakeEnvironment> {
    const now = options.now ?? NOW;
    const client = new FakeClient({
      statusSubresources: [certificatesRef, certificateRequestsRef, issuersRef, clusterIssuersRef],
      now: () => now,
    });
    client.add(certificatesRef, ...(seed.certificates ?? []));
    client.add(certificateRequestsRef, ...(seed.requests ?? []));
    client.add(builtins.secrets, ...((seed.secrets ?? []) as (Secret & KubeObject)[]));
    client.add(issuersRef, ...(seed.issuers ?? []));
    const ctx = createControllerContext(client, { ...options, log: silentLogger, now: () => now });
    const env = new FakeEnvironment(client, ctx);
    await startContext(ctx, env.#abort.signal);
    return env;
  }

  /** Runs one reconcile of the Certificate `name`, and lets the Events it recorded reach the client. */
  async reconcile(reconciler: Reconciler, name = 'web'): Promise<Result | undefined> {
    const result = await reconciler({ namespace: NAMESPACE, name }, this.#abort.signal);
    await new Promise((resolve) => setImmediate(resolve));
    return result ?? undefined;
  }

  /** The writes made, as `verb resource[/subresource] name`, oldest first (Events apart: see events()). */
  writes(): string[] {
    return this.client
      .writes()
      .filter((a) => a.resource !== 'events')
      .map((a) => `${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ''} ${a.name ?? ''}`);
  }

  /** The objects the writes of `verb` on `resource` stored, oldest first. */
  written<T = KubeObject>(verb: FakeAction['verb'], resource: string): T[] {
    return this.client
      .writes()
      .filter((a) => a.verb === verb && a.resource === resource)
      .map((a) => a.object as T);
  }

  /** The status the controller last wrote to the Certificate, if it wrote one. */
  lastStatus(): CertificateStatus | undefined {
    return this.written<Certificate>('update', 'certificates.cert-manager.io').at(-1)?.status;
  }

  /** The Events recorded, oldest first. */
  events(): RecordedEvent[] {
    return this.written<KubeObject & { type?: string; reason?: string; message?: string }>(
      'create',
      'events',
    ).map((e) => `${e.type} ${e.reason}: ${e.message}`);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.ctx.factory.stopped();
  }
}

/** A Request for the Certificate `name` in the test namespace. */
export const requestFor = (name = 'web'): Request => ({ namespace: NAMESPACE, name });
