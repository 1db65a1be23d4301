import { generateKeyPairSync } from 'node:crypto';
import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  enableOptimizingCompilers,
  KubeClient,
  loadKubeconfig,
  type RequestInfo,
  SharedInformerFactory,
  type SharedInformer,
  silentLogger,
} from '@certkit/runtime';
import { Annotations, Labels } from '../packages/certificates/src/api/constants.ts';
import type { Certificate, CertificateRequest } from '../packages/certificates/src/api/types.ts';
import {
  createControllerContext,
  startContext,
} from '../packages/certificates/src/controllers/create-context.ts';
import { newEventRecorders } from '../packages/certificates/src/controllers/events.ts';
import {
  certificateRequestsRef,
  certificatesRef,
  challengesRef,
  clusterIssuersRef,
  issuersRef,
  ordersRef,
} from '../packages/certificates/src/controllers/refs.ts';
import { LABELLED_SELECTOR, UNLABELLED_SELECTOR } from '../packages/certificates/src/secrets/selectors.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  parsePrivateKey,
  signCertificate,
} from '../packages/certificates/src/pki/index.ts';
import { rootCa } from '../packages/testenv/src/pki/ca.ts';

/**
 * The API traffic of a Certificate's issuance with no controller logic: bench/issuance-floor.ts forks this
 * process in place of the certificate controller. It opens the controller's watches, and when a Certificate
 * appears replays, step by step, the writes `certkit controller` makes for it (captured from a real run:
 * docs/adr/1205), each step taken when the watch event it reacts to arrives, by five workers per "controller"
 * as the real ones have. The bodies are real-sized: one ECDSA key, CSR and certificate made at start, reused
 * for every Certificate, so no cryptography is done per Certificate.
 *
 *   --kubeconfig=FILE         the cluster
 *   --workers=N               workers per replayed controller (5, the controller's --concurrent-workers)
 *   --events=false            leave out the 6 Events
 *   --conflicts=N             N status updates per Certificate sent with a stale resourceVersion first (a 409)
 *   --status-updates=3        the status written 3 times per Certificate instead of 5 (a what-if)
 *   --informers=controller    the controller's informers as createControllerContext opens them (the cache
 *                             transforms and indices too); `plain`: the same watches (resources, label
 *                             selectors, metadata-only Secrets), without the transforms and indices
 *
 * Over the IPC channel: sends { type: 'synced' } once the watches have synced; answers
 *   { cmd: 'requests' }  the requests sent so far, by `verb resource code`
 *   { cmd: 'kinds', count }  the cost of each kind of request alone (see measureKinds)
 *   { cmd: 'exit' }      stops and exits 0
 */

function flagValue(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

const WORKERS = Number(flagValue('workers') ?? 5);
const EVENTS = flagValue('events') !== 'false';
const CONFLICTS = Number(flagValue('conflicts') ?? 0);
const INFORMERS = flagValue('informers') ?? 'controller';
/**
 * 3: the Certificate's status written 3 times instead of 5 (Ready=False with Issuing=True, the key's name, the
 * issuance's end with Ready=True): what fewer visible writes would cost, not what cert-manager does.
 */
const MERGED_STATUS = flagValue('status-updates') === '3';

const requests = new Map<string, number>();
const countRequest = (info: RequestInfo) => {
  const key = `${info.verb} ${info.resource.replace('.cert-manager.io', '')} ${info.code}`;
  requests.set(key, (requests.get(key) ?? 0) + 1);
};
const config = await loadKubeconfig({ path: flagValue('kubeconfig')! });
// As `certkit controller --kube-api-qps=-1` (bench:issuance's controller flags): no client-side rate limit.
const client = new KubeClient({ ...config, qps: -1, onRequest: countRequest });
const abort = new AbortController();

// ---------------------------------------------------------------------------------------------------------
// Real-sized bodies, made once: what the controller's cryptography would produce for every Certificate.

const ca = await rootCa({ algorithm: 'ECDSA' } as never);
const issuer = { certPem: ca.certPem, key: parsePrivateKey(encodePrivateKey(ca.key)) };
const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
const csrPem = await buildCertificateRequest(
  { commonName: 'cert-0.bench.example', dnsNames: ['cert-0.bench.example'] },
  key,
);
const signed = await signCertificate({ csrPem, duration: 90 * 24 * 3600_000, isCA: false, issuer });
const b64 = (text: string) => Buffer.from(text).toString('base64');
/** The next-key Secret holds PKCS#8 (324 base64 characters for P-256), the issued one SEC1 (304). */
const pkcs8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
});
const BODIES = {
  nextKey: b64(pkcs8.toString()),
  issuedKey: b64(encodePrivateKey(key)),
  csr: b64(csrPem),
  certificate: b64(signed.certPem),
  ca: b64(ca.certPem),
};

// ---------------------------------------------------------------------------------------------------------
// The watches.

interface Watches {
  certificates: SharedInformer<Certificate>;
  requests: SharedInformer<CertificateRequest>;
}

async function openWatches(): Promise<Watches> {
  if (INFORMERS === 'controller') {
    const ctx = createControllerContext(client, { secretsFilteredCaching: true, log: silentLogger });
    await startContext(ctx, abort.signal);
    return { certificates: ctx.certificates, requests: ctx.certificateRequests };
  }
  const factory = new SharedInformerFactory({ client, log: silentLogger });
  const certificates = factory.informerFor<Certificate>(certificatesRef, {});
  const requests = factory.informerFor<CertificateRequest>(certificateRequestsRef, {});
  for (const ref of [issuersRef, clusterIssuersRef, ordersRef, challengesRef]) factory.informerFor(ref, {});
  factory.informerFor(client.resource(builtins.secrets), { labelSelector: LABELLED_SELECTOR });
  factory.informerFor(client.resource(builtins.secrets, 'metadata'), { labelSelector: UNLABELLED_SELECTOR });
  factory.start(abort.signal);
  if (!(await factory.waitForCacheSync(abort.signal))) throw new Error('watches did not sync');
  return { certificates, requests };
}

const watches = await openWatches();
const certificateClient = client.resource<Certificate>(certificatesRef);
const requestClient = client.resource<CertificateRequest>(certificateRequestsRef);
const secretClient = client.resource(builtins.secrets);
const recorders = newEventRecorders(client, silentLogger);
const event = (controller: string, obj: KubeObject, reason: string, message: string) => {
  if (EVENTS) recorders.from(controller).normal(obj, reason, message);
};

// ---------------------------------------------------------------------------------------------------------
// A workqueue per replayed controller: keys deduplicated, a key added while it is being handled handled again
// after, `WORKERS` at a time (the runtime's workqueue semantics, without its rate limiting).

class Stage {
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #active = new Set<string>();
  readonly #again = new Set<string>();
  #busy = 0;
  readonly #handle: (key: string) => Promise<void>;

  constructor(handle: (key: string) => Promise<void>) {
    this.#handle = handle;
  }

  add(key: string): void {
    if (this.#active.has(key)) return void this.#again.add(key);
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  #pump(): void {
    while (this.#busy < WORKERS && this.#queue.length) {
      const key = this.#queue.shift()!;
      this.#queued.delete(key);
      this.#active.add(key);
      this.#busy++;
      this.#handle(key)
        .catch((err: unknown) => process.stderr.write(`floor: ${key}: ${String(err)}\n`))
        .finally(() => {
          this.#busy--;
          this.#active.delete(key);
          if (this.#again.delete(key)) this.add(key);
          this.#pump();
        });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The replayed controllers. Each step is taken when the cache shows the result of the one before (the watch
// event of that write); `progress` only stops a step from being taken twice while the cache catches up.

interface Progress {
  readyFalse?: boolean;
  issuing?: boolean;
  keySecret?: string;
  requested?: boolean;
  signed?: boolean;
  issued?: boolean;
  keyDeleted?: boolean;
  readyTrue?: boolean;
  conflicts: number;
}
const progress = new Map<string, Progress>();
const progressOf = (key: string) => {
  let p = progress.get(key);
  if (!p) progress.set(key, (p = { conflicts: 0 }));
  return p;
};
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
type Condition = NonNullable<NonNullable<Certificate['status']>['conditions']>[number];
const condition = (cert: Certificate, type: string) => cert.status?.conditions?.find((c) => c.type === type);
const DOES_NOT_EXIST = 'Issuing certificate as Secret does not exist';

/** PUT of the status subresource with the cached object and a new status, as the controller's updateStatus. */
async function writeStatus(cert: Certificate, status: Certificate['status']): Promise<void> {
  const p = progressOf(`${cert.metadata.namespace}/${cert.metadata.name}`);
  if (p.conflicts < CONFLICTS) {
    // A write from a version already replaced, as two controllers racing on one Certificate make.
    p.conflicts++;
    const stale = { ...cert, metadata: { ...cert.metadata, resourceVersion: '1' }, status };
    await certificateClient.update(stale, { subresource: 'status' }).then(
      () => Promise.reject(new Error('stale write accepted')),
      (err: { code?: number }) => (err.code === 409 ? undefined : Promise.reject(err as Error)),
    );
  }
  await certificateClient.update({ ...cert, status }, { subresource: 'status' });
}

function cachedCertificate(key: string): Certificate | undefined {
  return watches.certificates.getStore().get(key);
}

function readyCondition(status: 'True' | 'False', reason: string, message: string): Condition {
  return { type: 'Ready', status, reason, message, observedGeneration: 1, lastTransitionTime: now() };
}

/** certificates-readiness: Ready=False at first sight, Ready=True once the issuance is over. */
const readiness = new Stage(async (key) => {
  const cert = cachedCertificate(key);
  const p = progressOf(key);
  if (!cert) return;
  if (MERGED_STATUS) return;
  if (!condition(cert, 'Ready') && !p.readyFalse) {
    p.readyFalse = true;
    await writeStatus(cert, {
      ...cert.status,
      conditions: [readyCondition('False', 'DoesNotExist', DOES_NOT_EXIST)],
    });
  } else if (
    cert.status?.revision === 1 &&
    !condition(cert, 'Issuing') &&
    condition(cert, 'Ready')?.status !== 'True' &&
    !p.readyTrue
  ) {
    p.readyTrue = true;
    await writeStatus(cert, {
      ...cert.status,
      conditions: [readyCondition('True', 'Ready', 'Certificate is up to date and has not expired')],
    });
  }
});

/** certificates-trigger: Issuing=True, once Ready=False is seen. */
const trigger = new Stage(async (key) => {
  const cert = cachedCertificate(key);
  const p = progressOf(key);
  if (!cert || condition(cert, 'Issuing') || cert.status?.revision || p.issuing) return;
  if (!MERGED_STATUS && !condition(cert, 'Ready')) return;
  p.issuing = true;
  await writeStatus(cert, {
    ...cert.status,
    conditions: [
      ...(MERGED_STATUS
        ? [readyCondition('False', 'DoesNotExist', DOES_NOT_EXIST)]
        : (cert.status?.conditions ?? [])),
      {
        type: 'Issuing',
        status: 'True',
        reason: 'DoesNotExist',
        message: DOES_NOT_EXIST,
        observedGeneration: 1,
        lastTransitionTime: now(),
      },
    ],
  });
  event('certificates-trigger', cert, 'Issuing', DOES_NOT_EXIST);
});

const ownerReference = (obj: KubeObject) => [
  {
    apiVersion: obj.apiVersion!,
    kind: obj.kind!,
    name: obj.metadata!.name!,
    uid: obj.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  },
];

/** certificates-key-manager: the next-key Secret and its name in the status; its deletion at the end. */
const keyManager = new Stage(async (key) => {
  const cert = cachedCertificate(key);
  const p = progressOf(key);
  if (!cert) return;
  if (condition(cert, 'Issuing')?.status === 'True' && !p.keySecret) {
    p.keySecret = '…';
    const secret = await secretClient.create(cert.metadata.namespace, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        namespace: cert.metadata.namespace,
        generateName: `${cert.metadata.name}-`,
        ownerReferences: ownerReference(cert),
        labels: { [Labels.isNextPrivateKeySecret]: 'true', [Labels.partOfCertManagerController]: 'true' },
      },
      data: { 'tls.key': BODIES.nextKey },
      type: 'Opaque',
    } as KubeObject);
    p.keySecret = secret.metadata!.name!;
    event(
      'certificates-key-manager',
      cert,
      'Generated',
      `Stored new private key in temporary Secret resource "${p.keySecret}"`,
    );
    await writeStatus(cert, { ...cert.status, nextPrivateKeySecretName: p.keySecret });
  } else if (p.issued && cert.status?.revision === 1 && !condition(cert, 'Issuing') && !p.keyDeleted) {
    p.keyDeleted = true;
    await secretClient.delete(cert.metadata.namespace, p.keySecret!);
  }
});

/** certificates-request-manager: the CertificateRequest, once the next key is named. */
const requestManager = new Stage(async (key) => {
  const cert = cachedCertificate(key);
  const p = progressOf(key);
  if (!cert || !cert.status?.nextPrivateKeySecretName || !condition(cert, 'Issuing') || p.requested) return;
  p.requested = true;
  const name = `${cert.metadata.name}-1`;
  await requestClient.create(cert.metadata.namespace, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name,
      namespace: cert.metadata.namespace,
      annotations: {
        [Annotations.certificateRevision]: '1',
        [Annotations.privateKeySecretName]: cert.status.nextPrivateKeySecretName,
        [Annotations.certificateName]: cert.metadata.name!,
      },
      ownerReferences: ownerReference(cert),
    },
    spec: { issuerRef: cert.spec.issuerRef, request: BODIES.csr },
  } as CertificateRequest);
  event(
    'certificates-request-manager',
    cert,
    'Requested',
    `Created new CertificateRequest resource "${name}"`,
  );
});

/** certificaterequests-approver and -issuer-ca: approved and signed in one status update, two Events. */
const requestSigner = new Stage(async (key) => {
  const request = watches.requests.getStore().get(key);
  const p = progressOf(key);
  if (!request || request.status?.conditions?.length || p.signed) return;
  p.signed = true;
  const at = now();
  await requestClient.update(
    {
      ...request,
      status: {
        conditions: [
          {
            type: 'Approved',
            status: 'True',
            reason: 'cert-manager.io',
            message: 'Certificate request has been approved by cert-manager.io',
            lastTransitionTime: at,
          },
          {
            type: 'Ready',
            status: 'True',
            reason: 'Issued',
            message: 'Certificate fetched from issuer successfully',
            lastTransitionTime: at,
          },
        ],
        certificate: BODIES.certificate,
        ca: BODIES.ca,
      },
    } as CertificateRequest,
    { subresource: 'status' },
  );
  event(
    'certificaterequests-approver',
    request,
    'cert-manager.io',
    'Certificate request has been approved by cert-manager.io',
  );
  event(
    'certificaterequests-issuer-ca',
    request,
    'CertificateIssued',
    'Certificate fetched from issuer successfully',
  );
});

/** certificates-issuing: the Secret, then the status (revision, validity, Issuing gone), once the request is Ready. */
const issuing = new Stage(async (key) => {
  const cert = cachedCertificate(key);
  const p = progressOf(key);
  if (!cert || p.issued) return;
  const request = watches.requests.getStore().get(`${key}-1`);
  if (request?.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return;
  p.issued = true;
  const name = cert.metadata.name!;
  const dnsNames = (cert.spec.dnsNames ?? []).join(',');
  await secretClient.create(cert.metadata.namespace, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: cert.spec.secretName,
      namespace: cert.metadata.namespace,
      labels: { [Labels.partOfCertManagerController]: 'true' },
      annotations: {
        'cert-manager.io/common-name': cert.spec.commonName ?? '',
        'cert-manager.io/alt-names': dnsNames,
        'cert-manager.io/ip-sans': '',
        'cert-manager.io/uri-sans': '',
        'cert-manager.io/certificate-name': name,
        'cert-manager.io/issuer-name': cert.spec.issuerRef.name,
        'cert-manager.io/issuer-kind': '',
        'cert-manager.io/issuer-group': '',
      },
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.key': BODIES.issuedKey, 'tls.crt': BODIES.certificate, 'ca.crt': BODIES.ca },
  } as KubeObject);
  const notBefore = new Date();
  const day = 24 * 3600_000;
  const iso = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');
  const { nextPrivateKeySecretName: _next, ...status } = cert.status ?? {};
  await writeStatus(cert, {
    ...status,
    conditions: MERGED_STATUS
      ? [readyCondition('True', 'Ready', 'Certificate is up to date and has not expired')]
      : (cert.status?.conditions ?? []).filter((c) => c.type !== 'Issuing'),
    revision: 1,
    notBefore: iso(notBefore),
    notAfter: iso(new Date(notBefore.getTime() + 90 * day)),
    renewalTime: iso(new Date(notBefore.getTime() + 60 * day)),
  });
  event('certificates-issuing', cert, 'Issuing', 'The certificate has been successfully issued');
});

/** The bench's Certificates are in this namespace; the per-kind writes (measureKind) elsewhere are not replayed. */
const REPLAYED_NAMESPACE = 'bench';
let working = false;
const certificateChanged = (cert: Certificate) => {
  if (cert.metadata.namespace !== REPLAYED_NAMESPACE) return;
  if (!working) {
    // As `certkit controller` started with the shipped node flags: V8's optimizing compilers on at first work.
    working = true;
    enableOptimizingCompilers();
  }
  const key = `${cert.metadata.namespace}/${cert.metadata.name}`;
  for (const stage of [readiness, trigger, keyManager, requestManager, issuing]) stage.add(key);
};
watches.certificates.addEventHandler({
  onAdd: (cert) => certificateChanged(cert),
  onUpdate: (_old, cert) => certificateChanged(cert),
});
const requestChanged = (request: CertificateRequest) => {
  if (request.metadata.namespace !== REPLAYED_NAMESPACE) return;
  const key = `${request.metadata.namespace}/${request.metadata.name}`;
  requestSigner.add(key);
  issuing.add(key.replace(/-1$/, ''));
};
watches.requests.addEventHandler({
  onAdd: (request) => requestChanged(request),
  onUpdate: (_old, request) => requestChanged(request),
});

// ---------------------------------------------------------------------------------------------------------

process.on('message', (raw) => {
  const msg = raw as { id: number; cmd: string; count?: number; kind?: string; certs?: number };
  const reply = (body: Record<string, unknown>) => process.send!({ id: msg.id, ...body });
  void (async () => {
    switch (msg.cmd) {
      case 'requests':
        return reply({ requests: Object.fromEntries(requests) });
      case 'kind':
        await measureKind(msg.kind!, msg.count!, msg.certs!);
        return reply({});
      case 'exit':
        abort.abort();
        client.close();
        reply({});
        return process.exit(0);
      default:
        reply({ error: `unknown command ${msg.cmd}` });
    }
  })().catch((err: unknown) => reply({ error: String(err) }));
});

// ---------------------------------------------------------------------------------------------------------
// One kind of request alone, `count` times, 5 at a time, each waiting for its watch event where one comes to
// this process (the parent reads both processes' CPU around each kind).

/** Set by the first measureKind: the issuances' own events are not waited for. */
let measuring = false;
const seen = new Map<string, () => void>();
/** Events that came before their writer asked for them (the watch can outrun the write's response). */
const early = new Set<string>();
const waitSeen = (key: string) =>
  early.delete(key) ? Promise.resolve() : new Promise<void>((resolve) => seen.set(key, resolve));
const arrived = (obj: KubeObject) => {
  if (!measuring) return;
  const key = `${obj.metadata?.name}@${obj.metadata?.resourceVersion}`;
  const waiter = seen.get(key);
  if (waiter) {
    seen.delete(key);
    waiter();
  } else early.add(key);
};
watches.certificates.addEventHandler({ onUpdate: (_old, cert) => arrived(cert) });
watches.requests.addEventHandler({ onUpdate: (_old, request) => arrived(request) });

async function measureKind(kind: string, count: number, certs: number): Promise<void> {
  measuring = true;
  let next = 0;
  const one = async (i: number) => {
    const ns = 'floor-kinds';
    switch (kind) {
      case 'event':
        // As the recorder: one create, nobody watches Events.
        await client.resource(builtins.events).create(ns, {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `kind-${i}.${Date.now().toString(16)}`, namespace: ns },
          involvedObject: {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Certificate',
            name: `kind-${i}`,
            namespace: ns,
          },
          reason: 'Issuing',
          message: DOES_NOT_EXIST,
          type: 'Normal',
          source: { component: 'cert-manager-certificates-trigger' },
          reportingComponent: 'cert-manager-certificates-trigger',
          firstTimestamp: now(),
          lastTimestamp: now(),
          count: 1,
        } as KubeObject);
        return;
      case 'status-update': {
        // A Certificate status update and its watch event, on a Ready Certificate of the replay.
        const cert = cachedCertificate(`bench/cert-${i % certs}`)!;
        const written = await certificateClient.update(
          {
            ...cert,
            status: {
              ...cert.status,
              conditions: [readyCondition('True', 'Ready', `Certificate is up to date (${i})`)],
            },
          },
          { subresource: 'status' },
        );
        await waitSeen(`${written.metadata.name}@${written.metadata.resourceVersion}`);
        return;
      }
      case 'conflict': {
        const cert = cachedCertificate(`bench/cert-${i % certs}`)!;
        await certificateClient
          .update(
            { ...cert, metadata: { ...cert.metadata, resourceVersion: '1' } },
            { subresource: 'status' },
          )
          .catch((err: { code?: number }) => {
            if (err.code !== 409) throw err;
          });
        return;
      }
      case 'secret-create-delete': {
        // The next-key Secret: created (its watch event comes to the labelled Secret cache) and deleted.
        const secret = await secretClient.create(ns, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            generateName: `kind-${i}-`,
            labels: { [Labels.isNextPrivateKeySecret]: 'true', [Labels.partOfCertManagerController]: 'true' },
          },
          data: { 'tls.key': BODIES.nextKey },
          type: 'Opaque',
        } as KubeObject);
        await secretClient.delete(ns, secret.metadata!.name!);
        return;
      }
      case 'request-create-update': {
        // A CertificateRequest with its CSR, then its status with the certificate, and that update's watch event.
        const created = await requestClient.create(ns, {
          apiVersion: 'cert-manager.io/v1',
          kind: 'CertificateRequest',
          metadata: { name: `kind-${i}-1`, namespace: ns },
          spec: { issuerRef: { name: 'ca-0' }, request: BODIES.csr },
        } as CertificateRequest);
        const written = await requestClient.update(
          {
            ...created,
            status: { conditions: [], certificate: BODIES.certificate, ca: BODIES.ca },
          } as CertificateRequest,
          { subresource: 'status' },
        );
        await waitSeen(`${written.metadata.name}@${written.metadata.resourceVersion}`);
        return;
      }
      case 'certificate-secret-create':
        // The issued Secret (key, certificate, CA), as the issuing controller creates it.
        await secretClient.create(ns, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `kind-${i}-tls`, labels: { [Labels.partOfCertManagerController]: 'true' } },
          type: 'kubernetes.io/tls',
          data: { 'tls.key': BODIES.issuedKey, 'tls.crt': BODIES.certificate, 'ca.crt': BODIES.ca },
        } as KubeObject);
        return;
      default:
        throw new Error(`unknown kind ${kind}`);
    }
  };
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < count) await one(next++);
    }),
  );
}

process.send!({ type: 'synced' });
