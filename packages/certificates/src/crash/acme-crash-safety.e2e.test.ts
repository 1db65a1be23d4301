/**
 * Crash safety of ACME issuance: the certificate controller, run through the CLI as a process of its own, is
 * SIGKILLed several times at random moments while it issues 50 Certificates from a real Pebble (half by
 * HTTP-01 on the controller's embedded listener, half by DNS-01 written into a real BIND with RFC 2136), and
 * restarted right after each kill. Whatever a kill interrupted (an Order created but not recorded, a
 * Challenge presented but not accepted, a TXT record written but not removed, a finalizer not yet dropped),
 * the next process must pick it up from the API server and the ACME server alone:
 *
 * - every Certificate ends Ready, with a Pebble-issued certificate for its name matching its private key
 *   (through a second request when a kill interrupted Pebble's validation of the first);
 * - every Order is owned by a CertificateRequest that exists, and none is stuck deleting;
 * - every Challenge is gone in the end (its Order is valid), so none is left without its Order or stuck
 *   with a finalizer;
 * - no `_acme-challenge` TXT record is left in BIND's zone.
 *
 * CERTKIT_CRASH_SEED=<n> replays a run's kill schedule (it is printed with the summary).
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  KubeClient,
  loadKubeconfig,
  type ResourceClient,
  SharedInformerFactory,
  type SharedInformer,
  silentLogger,
} from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { GROUP, Kinds } from '../api/constants.ts';
import type { Challenge, Order } from '../api/acme-types.ts';
import type { Certificate, CertificateRequest, Issuer } from '../api/types.ts';
import { installCrds } from '../controller.ts';
import {
  certificateRequestsRef,
  certificatesRef,
  challengesRef,
  issuersRef,
  ordersRef,
} from '../controllers/refs.ts';
import { certificateMatchesKey, parsePrivateKey } from '../pki/index.ts';
import { type ControllerProcess, startControllerProcess } from '@certkit/testenv/crash/processes';
import {
  type AcmeCrashEnvironment,
  CRASH_DNS01_DOMAIN,
  CRASH_HTTP01_DOMAIN,
  startAcmeCrashEnvironment,
} from '@certkit/testenv/crash/acme-processes';
import { acmeEnvironmentSkip } from '@certkit/testenv/acme/acme-environment';

const NS = 'acme-crash';
const HTTP01 = 25;
const DNS01 = 25;
const KILLS = 6;
/**
 * When the kills land. Progress is counted in steps seen by the test's informers: an Order appears, a
 * Challenge appears, the Certificate is Ready (three per Certificate). Kill k waits until progress reaches a
 * random point of the k-th of KILLS + 1 slices, then a random moment more, so that the kills spread over the
 * whole run whatever this machine's speed. A process whose target was already met when it started dies at a
 * random moment of its start-up.
 */
const STEPS = 3;
const JITTER_MS = { min: 0, max: 300 };
const RESTART_LIFETIME_MS = { min: 200, max: 800 };
/**
 * A kill between accepting an HTTP-01 challenge and Pebble's fetch of the answer takes the answer down with the
 * process (the embedded listener is in it), so Pebble fails the challenge and the Order: the request Fails, as
 * with cert-manager, and the Certificate is tried again after the failure backoff, here 2 s instead of 1 h.
 */
const CONTROLLER_FLAGS = [
  '--kube-api-qps=-1',
  '--concurrent-workers=5',
  '--certificate-request-minimum-backoff-duration=2s',
];

/** mulberry32: a small seeded generator, so that a failing kill schedule can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = Number(process.env.CERTKIT_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const rand = random(seed);
const between = (range: { min: number; max: number }) =>
  Math.round(range.min + rand() * (range.max - range.min));

const skip = acmeEnvironmentSkip();

let env: AcmeCrashEnvironment;
let admin: KubeClient;
let controller: ControllerProcess | undefined;
let watchedCerts: SharedInformer<Certificate>;
let onProgress: (() => void) | undefined;
const ordersSeen = new Set<string>();
/** Each Challenge seen, by name, with its type (HTTP-01 or DNS-01). */
const challengesSeen = new Map<string, string>();
/** HTTP-01 Challenges Pebble failed because its fetch found the controller killed (the only failure expected). */
const validationsInterrupted = new Set<string>();
const stopWatching = new AbortController();

const readyOf = (cert: Certificate) => cert.status?.conditions?.find((c) => c.type === 'Ready');
const isReady = (cert: Certificate) =>
  readyOf(cert)?.status === 'True' && readyOf(cert)?.observedGeneration === cert.metadata.generation;

const readyNow = () => watchedCerts.getStore().list().filter(isReady).length;
function progressNow(total: number): number {
  return Math.min(ordersSeen.size, total) + Math.min(challengesSeen.size, total) + readyNow();
}

/** Resolves once `measure()` reaches `target`. */
function reached(measure: () => number, target: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (measure() < target) return;
      onProgress = undefined;
      resolve();
    };
    onProgress = check;
    check();
  });
}

/** Polls until check() returns undefined (all good) or the deadline passes; returns the last complaint. */
async function settle(
  check: () => Promise<string | undefined>,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problem = await check();
    if (problem === undefined || Date.now() > deadline) return problem;
    await sleep(250);
  }
}

function certificate(name: string, dnsName: string): Certificate {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: Kinds.Certificate,
    metadata: { name, namespace: NS },
    spec: {
      secretName: `${name}-tls`,
      dnsNames: [dnsName],
      privateKey: { algorithm: 'ECDSA', size: 256 },
      issuerRef: { name: 'pebble' },
    },
  } as Certificate;
}

before(async () => {
  if (skip) return;
  env = await startAcmeCrashEnvironment();
  admin = new KubeClient({ ...(await loadKubeconfig({ path: env.server.kubeconfigPath })), qps: -1 });
  await installCrds(admin);
  // CRDs are served a moment after they are created.
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef, ordersRef, challengesRef]) {
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
  await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: NS } });
  const factory = new SharedInformerFactory({ client: admin, log: silentLogger });
  watchedCerts = factory.informerFor<Certificate>(certificatesRef, { namespace: NS });
  watchedCerts.addEventHandler({ onAdd: () => onProgress?.(), onUpdate: () => onProgress?.() });
  const orders = factory.informerFor<Order>(ordersRef, { namespace: NS });
  orders.addEventHandler({
    onAdd: (o) => {
      ordersSeen.add(o.metadata.name!);
      onProgress?.();
    },
  });
  const challenges = factory.informerFor<Challenge>(challengesRef, { namespace: NS });
  const interrupted = (c: Challenge) => {
    const refused = /connection reset by peer|connection refused|EOF/;
    if (c.spec.type === 'HTTP-01' && c.status?.state === 'invalid' && refused.test(c.status.reason ?? ''))
      validationsInterrupted.add(c.metadata.name!);
  };
  challenges.addEventHandler({
    onAdd: (c) => {
      challengesSeen.set(c.metadata.name!, c.spec.type);
      interrupted(c);
      onProgress?.();
    },
    onUpdate: (_old, c) => interrupted(c),
  });
  factory.start(stopWatching.signal);
  for (const informer of [watchedCerts, orders, challenges]) {
    assert.ok(await informer.waitForSync(AbortSignal.timeout(15_000)), 'the test informers synced');
  }
});

after(async () => {
  await controller?.kill();
  stopWatching.abort();
  admin?.close();
  await env?.close();
});

describe('crash safety of ACME issuance', { skip }, () => {
  it(`issues ${HTTP01 + DNS01} Certificates from Pebble through ${KILLS} SIGKILLs`, async (t) => {
    const certs: ResourceClient<Certificate> = admin.resource<Certificate>(certificatesRef);
    const secrets = admin.resource<Secret & KubeObject>(builtins.secrets);
    await secrets.create(NS, {
      metadata: { name: 'tsig', namespace: NS },
      data: { secret: Buffer.from(env.tsig.secret).toString('base64') },
    } as Secret & KubeObject);
    // One Issuer, both mechanisms: its solvers are picked per name by their dnsZones selectors.
    await admin.resource<Issuer>(issuersRef).create(NS, {
      apiVersion: `${GROUP}/v1`,
      kind: Kinds.Issuer,
      metadata: { name: 'pebble', namespace: NS },
      spec: {
        acme: {
          server: env.pebble.directoryUrl,
          caBundle: Buffer.from(env.pebble.caBundle).toString('base64'),
          privateKeySecretRef: { name: 'pebble-account-key' },
          solvers: [
            { selector: { dnsZones: [CRASH_HTTP01_DOMAIN] }, http01: { ingress: {} } },
            {
              selector: { dnsZones: [CRASH_DNS01_DOMAIN] },
              dns01: {
                rfc2136: {
                  nameserver: env.bind.address,
                  tsigKeyName: env.tsig.keyName,
                  tsigAlgorithm: env.tsig.algorithm,
                  tsigSecretSecretRef: { name: 'tsig', key: 'secret' },
                },
              },
            },
          ],
        },
      },
    } as Issuer);
    const all: Certificate[] = [];
    for (let i = 0; i < HTTP01; i++) all.push(certificate(`http-${i}`, `c${i}.${CRASH_HTTP01_DOMAIN}`));
    for (let i = 0; i < DNS01; i++) all.push(certificate(`dns-${i}`, `c${i}.${CRASH_DNS01_DOMAIN}`));
    for (let i = 0; i < all.length; i += 10) {
      await Promise.all(all.slice(i, i + 10).map((c) => certs.create(NS, c)));
    }
    const total = all.length;
    const progress = () => progressNow(total);

    const started = performance.now();
    const kills: { atMs: number; progress: string; ready: number }[] = [];
    for (let k = 0; k < KILLS; k++) {
      const target = Math.floor((STEPS * total * (k + rand())) / (KILLS + 1));
      const jitter = between(JITTER_MS);
      const lifetime = between(RESTART_LIFETIME_MS);
      controller = startControllerProcess(env.server.kubeconfigPath, [
        ...CONTROLLER_FLAGS,
        ...env.controllerFlags,
      ]);
      await controller.running;
      const due =
        progress() >= target
          ? sleep(lifetime)
          : Promise.race([
              reached(progress, target).then(() => sleep(jitter)),
              sleep(60_000, undefined, { ref: false }),
            ]);
      const early = await Promise.race([due.then(() => false), controller.exited.then(() => true)]);
      onProgress = undefined;
      assert.equal(early, false, `the controller exited on its own:\n${controller.output()}`);
      await controller.kill('SIGKILL');
      kills.push({
        atMs: Math.round(performance.now() - started),
        progress: `${Math.round((100 * progress()) / (STEPS * total))}%`,
        ready: readyNow(),
      });
    }
    const killsDuringIssuance = kills.filter((k) => k.ready < total).length;

    controller = startControllerProcess(env.server.kubeconfigPath, [
      ...CONTROLLER_FLAGS,
      ...env.controllerFlags,
    ]);
    const finished = await Promise.race([
      reached(readyNow, total).then(() => 'ready' as const),
      controller.exited.then(() => 'exited' as const),
      sleep(120_000, undefined, { ref: false }).then(() => 'timeout' as const),
    ]);
    onProgress = undefined;
    const notReady = () =>
      watchedCerts
        .getStore()
        .list()
        .filter((c) => !isReady(c))
        .map((c) => `${c.metadata.name}: ${readyOf(c)?.message ?? 'no Ready condition'}`)
        .slice(0, 5)
        .join('\n');
    assert.equal(finished, 'ready', `${readyNow()}/${total} Ready (${finished}):\n${notReady()}`);
    const allReadyMs = Math.round(performance.now() - started);

    // Clean-up after Ready (Challenges of valid Orders, TXT records, old requests) is asynchronous.
    const orders = admin.resource<Order>(ordersRef);
    const challenges = admin.resource<Challenge>(challengesRef);
    const requests = admin.resource<CertificateRequest>(certificateRequestsRef);
    const leftovers = async () => {
      const requestNames = new Set((await requests.list(NS)).items.map((r) => r.metadata.name));
      const orderList = (await orders.list(NS)).items;
      for (const order of orderList) {
        const owner = order.metadata.ownerReferences?.find((r) => r.controller);
        if (owner?.kind !== Kinds.CertificateRequest || !requestNames.has(owner.name))
          return `Order ${order.metadata.name} is orphaned (owner ${JSON.stringify(owner)})`;
        if (order.metadata.deletionTimestamp) return `Order ${order.metadata.name} is stuck deleting`;
      }
      const orderNames = new Set(orderList.map((o) => o.metadata.name));
      const challengeList = (await challenges.list(NS)).items;
      for (const ch of challengeList) {
        const owner = ch.metadata.ownerReferences?.find((r) => r.controller);
        if (owner?.kind !== 'Order' || !orderNames.has(owner.name))
          return `Challenge ${ch.metadata.name} is orphaned (owner ${JSON.stringify(owner)})`;
      }
      if (challengeList.length)
        return `Challenges left: ${challengeList
          .map((c) => `${c.metadata.name} (${c.status?.state}, finalizers ${c.metadata.finalizers})`)
          .join(', ')}`;
      const records = await env.challengeRecords();
      if (records.length) return `TXT records left in BIND:\n${records.join('\n')}`;
      return undefined;
    };
    const leftover = await settle(leftovers, 30_000);
    assert.equal(leftover, undefined, leftover ?? '');

    const certificates = (await certs.list(NS)).items;
    assert.equal(certificates.length, total);
    const roots = await env.pebble.roots();
    assert.ok(roots.length >= 1);
    for (const cert of certificates) {
      assert.ok(isReady(cert), `${cert.metadata.name} is Ready`);
      const secret = await secrets.get(NS, cert.spec.secretName);
      const certPem = Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString();
      const keyPem = Buffer.from(secret.data?.['tls.key'] ?? '', 'base64').toString();
      assert.ok(certificateMatchesKey(certPem, parsePrivateKey(keyPem)), `${cert.metadata.name}: key pair`);
      const leaf = new X509Certificate(certPem);
      assert.equal(leaf.subjectAltName, `DNS:${cert.spec.dnsNames![0]}`);
      assert.match(leaf.issuer, /Pebble Intermediate CA/, `${cert.metadata.name}: issued by Pebble`);
    }
    const ordersLeft = (await orders.list(NS)).items;
    assert.ok(
      ordersLeft.every((o) => o.status?.state === 'valid'),
      `every Order left is valid: ${ordersLeft.map((o) => `${o.metadata.name}=${o.status?.state}`).join(', ')}`,
    );

    // Both mechanisms were exercised, one Challenge per Certificate each (none created twice), plus one more
    // for each HTTP-01 validation a kill interrupted (its Order failed, and the retry ordered again).
    const types = [...challengesSeen.values()];
    assert.equal(
      types.filter((type) => type === 'HTTP-01').length,
      HTTP01 + validationsInterrupted.size,
      `HTTP-01 Challenges (${validationsInterrupted.size} validations interrupted by a kill)`,
    );
    assert.equal(types.filter((type) => type === 'DNS-01').length, DNS01, 'DNS-01 Challenges');

    // Not the product's fault if it is too fast for the schedule, but then this test would test little.
    assert.ok(killsDuringIssuance >= KILLS / 2, `only ${killsDuringIssuance} kills before all were Ready`);

    const summary = {
      seed,
      kills: kills.length,
      killsDuringIssuance,
      killSchedule: kills,
      certificates: total,
      allReadyAfterMs: allReadyMs,
      ordersCreated: ordersSeen.size,
      challengesCreated: challengesSeen.size,
      validationsInterrupted: validationsInterrupted.size,
      ordersLeft: ordersLeft.length,
    };
    t.diagnostic(`acme crash safety: ${JSON.stringify(summary)}`);
    console.log(
      `# ${kills.length} SIGKILLs (seed ${seed}), ${killsDuringIssuance} before all were Ready; all ${total} ` +
        `Ready ${(allReadyMs / 1000).toFixed(1)} s after the first start; ${ordersSeen.size} Orders and ` +
        `${challengesSeen.size} Challenges created (${validationsInterrupted.size} HTTP-01 validations ` +
        `interrupted by a kill, then ordered again), ${ordersLeft.length} Orders left`,
    );
  });
});
