/**
 * Runs the conformance scenarios of one issuer variant concurrently in a fresh namespace: creates every
 * Certificate at once, waits for each to be Ready and done issuing, then validates it. Outcomes are plain
 * data (failure messages), so a broken scenario never hides another, and the node:test cases only assert.
 */

import { isConflict } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import { X509Certificate } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Certificate, CertificateSpec } from '@certkit/certificates/api/types';
import {
  CertificateWaiter,
  type Environment,
  eventually,
  getSecret,
  type IssuerVariant,
  prepareIssuer,
  type PreparedIssuer,
  readyAndDoneIssuing,
} from './environment.ts';
import { randomString, randomSubdomain, type Scenario, TABLE } from './scenarios.ts';
import { type Check, inspectSecret, type Issued, validate } from './validations.ts';
import { pemCertificates } from './x509-view.ts';

export interface Outcome {
  id: number;
  name: string;
  /** The Certificate reached Ready (at least its first issuance). */
  issued: boolean;
  /** Certificates issued for it, re-issues included. */
  issuances: number;
  /** From create to Ready and done issuing (first issuance). */
  msToReady?: number;
  failures: string[];
}

export interface VariantRun {
  namespace: string;
  issuer: PreparedIssuer;
  outcome(id: number): Promise<Outcome>;
  /** Resolves once every scenario has settled. */
  settled: Promise<Outcome[]>;
  summary(): Promise<string>;
}

const pad = (id: number) => String(id).padStart(2, '0');

/** The issuer actually signed: SelfSigned puts the certificate in ca.crt; CA puts its own certificate there. */
function expectIssuedBy(variant: IssuerVariant, issuer: PreparedIssuer): Check {
  return (issued) => {
    if (!issued.leaf || !issued.data['ca.crt']) return [];
    const [caDer] = pemCertificates(issued.data['ca.crt']);
    if (!caDer) return [];
    const ca = new X509Certificate(caDer);
    if (variant.type === 'SelfSigned') {
      return ca.fingerprint256 === issued.leaf.fingerprint256
        ? []
        : ['SelfSigned: ca.crt is not the issued certificate itself'];
    }
    const want = new X509Certificate(issuer.caPem!);
    const failures: string[] = [];
    if (ca.fingerprint256 !== want.fingerprint256)
      failures.push('CA: ca.crt is not the issuer CA certificate');
    if (!issued.leaf.verify(want.publicKey)) failures.push('CA: the leaf is not signed by the issuer CA key');
    return failures;
  };
}

class ScenarioContext {
  readonly env: Environment;
  readonly variant: IssuerVariant;
  readonly namespace: string;
  readonly issuer: PreparedIssuer;
  readonly waiter: CertificateWaiter;

  constructor(env: Environment, variant: IssuerVariant, namespace: string, issuer: PreparedIssuer) {
    this.env = env;
    this.variant = variant;
    this.namespace = namespace;
    this.issuer = issuer;
    this.waiter = new CertificateWaiter(env, namespace);
  }

  async create(name: string, spec: Omit<CertificateSpec, 'secretName' | 'issuerRef'>, secretName: string) {
    return this.env.certificates.create(this.namespace, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name, namespace: this.namespace },
      spec: { ...spec, secretName, issuerRef: this.issuer.issuerRef },
    });
  }

  waitReady(name: string, minRevision = 1): Promise<Certificate> {
    return this.waiter.waitFor(
      name,
      (cert) => readyAndDoneIssuing(cert) && (cert.status?.revision ?? 0) >= minRevision,
      `Ready and done issuing at revision >= ${minRevision}`,
    );
  }

  /** The Certificate's Secret, validated; failures are prefixed with `stage`. */
  async validate(
    cert: Certificate,
    stage: string,
    extra: Record<string, Check> = {},
  ): Promise<{
    failures: string[];
    issued?: Issued;
  }> {
    const secret = await getSecret(this.env, this.namespace, cert.spec.secretName);
    if (!secret) return { failures: [`${stage}: Secret ${cert.spec.secretName} not found`] };
    const issued = inspectSecret(cert, secret);
    const checks = { expectIssuedBy: expectIssuedBy(this.variant, this.issuer), ...extra };
    return { failures: validate(issued, checks).map((f) => `${stage}: ${f}`), issued };
  }
}

async function runTableScenario(ctx: ScenarioContext, scenario: Scenario): Promise<Outcome> {
  const suffix = randomString(5);
  const name = `e2e-conformance-${pad(scenario.id)}-${suffix}`;
  const outcome: Outcome = { id: scenario.id, name, issued: false, issuances: 0, failures: [] };
  const start = performance.now();
  try {
    const { spec, extra } = scenario.build();
    await ctx.create(name, spec, `e2e-conformance-tls-${pad(scenario.id)}-${suffix}`);
    const cert = await ctx.waitReady(name);
    outcome.msToReady = performance.now() - start;
    outcome.issued = true;
    outcome.issuances = cert.status?.revision ?? 0;
    outcome.failures.push(...(await ctx.validate(cert, 'issued', extra)).failures);
  } catch (err) {
    outcome.failures.push((err as Error).message);
  }
  return outcome;
}

const spkiOf = (issued: Issued | undefined) =>
  issued?.leaf?.publicKey.export({ type: 'spki', format: 'der' }) as Buffer | undefined;

/** 30: rotationPolicy Never; the CertificateRequest deleted and tls.crt blanked; same key after re-issue. */
async function runScenario30(ctx: ScenarioContext): Promise<Outcome> {
  const suffix = randomString(5);
  const name = `e2e-conformance-30-${suffix}`;
  const secretName = `e2e-conformance-tls-30-${suffix}`;
  const outcome: Outcome = { id: 30, name, issued: false, issuances: 0, failures: [] };
  const start = performance.now();
  try {
    await ctx.create(
      name,
      { dnsNames: [randomSubdomain()], privateKey: { rotationPolicy: 'Never' } },
      secretName,
    );
    const first = await ctx.waitReady(name);
    outcome.msToReady = performance.now() - start;
    outcome.issued = true;
    outcome.issuances = first.status?.revision ?? 0;
    const before = await ctx.validate(first, 'first issuance');
    outcome.failures.push(...before.failures);

    // Delete the CertificateRequest(s) of this Certificate, then blank tls.crt.
    const requests = (await ctx.env.certificateRequests.list(ctx.namespace)).items.filter(
      (cr) => cr.metadata.annotations?.['cert-manager.io/certificate-name'] === name,
    );
    if (!requests.length) outcome.failures.push('no CertificateRequest found for the first issuance');
    for (const cr of requests) await ctx.env.certificateRequests.delete(ctx.namespace, cr.metadata.name!);
    await retryOnConflict(async () => {
      const secret = (await getSecret(ctx.env, ctx.namespace, secretName))!;
      await ctx.env.secrets.update({ ...secret, data: { ...secret.data, 'tls.crt': '' } });
    });

    // WaitForSecretCertificateData, then the Certificate Ready again at a later revision.
    await eventually(
      async () => {
        const secret = await getSecret(ctx.env, ctx.namespace, secretName);
        const crt = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
        try {
          return crt && new X509Certificate(crt) ? true : undefined;
        } catch {
          return undefined;
        }
      },
      `${secretName} to hold a certificate again`,
      30_000,
    );
    const second = await ctx.waitReady(name, (first.status?.revision ?? 0) + 1);
    outcome.issuances = second.status?.revision ?? 0;
    const after = await ctx.validate(second, 're-issue');
    outcome.failures.push(...after.failures);

    const key1 = spkiOf(before.issued);
    const key2 = spkiOf(after.issued);
    if (!key1 || !key2) outcome.failures.push('re-issue: could not read both public keys');
    else if (!key1.equals(key2))
      outcome.failures.push('re-issue: the certificates are not signed for the same private key');
    if (before.issued?.leaf?.serialNumber === after.issued?.leaf?.serialNumber)
      outcome.failures.push('re-issue: tls.crt holds the same certificate as before (serial unchanged)');
  } catch (err) {
    outcome.failures.push((err as Error).message);
  }
  return outcome;
}

/** 31: append a DNS name to an issued Certificate; it re-issues and revalidates. */
async function runScenario31(ctx: ScenarioContext): Promise<Outcome> {
  const suffix = randomString(5);
  const name = `e2e-conformance-31-${suffix}`;
  const outcome: Outcome = { id: 31, name, issued: false, issuances: 0, failures: [] };
  const start = performance.now();
  try {
    await ctx.create(name, { dnsNames: [randomSubdomain()] }, `e2e-conformance-tls-31-${suffix}`);
    const first = await ctx.waitReady(name);
    outcome.msToReady = performance.now() - start;
    outcome.issued = true;
    outcome.issuances = first.status?.revision ?? 0;
    outcome.failures.push(...(await ctx.validate(first, 'first issuance')).failures);

    const newDnsName = randomSubdomain();
    await retryOnConflict(async () => {
      const cert = await ctx.env.certificates.get(ctx.namespace, name);
      cert.spec.dnsNames = [...(cert.spec.dnsNames ?? []), newDnsName];
      await ctx.env.certificates.update(cert);
    });
    const second = await ctx.waitReady(name, (first.status?.revision ?? 0) + 1);
    outcome.issuances = second.status?.revision ?? 0;
    if (!second.spec.dnsNames?.includes(newDnsName))
      outcome.failures.push('update: the new DNS name is not in the spec');
    const after = await ctx.validate(second, 'after update');
    outcome.failures.push(...after.failures);
  } catch (err) {
    outcome.failures.push((err as Error).message);
  }
  return outcome;
}

async function retryOnConflict(fn: () => Promise<void>, attempts = 5): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isConflict(err) || i >= attempts) throw err;
    }
  }
}

/** Prepares the variant's namespace and issuer, then starts every scenario at once. */
export async function startVariant(env: Environment, variant: IssuerVariant): Promise<VariantRun> {
  const start = performance.now();
  const suffix = randomString(5);
  const namespace = `conformance-${variant.type.toLowerCase()}-${variant.kind.toLowerCase()}-${suffix}`;
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: namespace } });
  const issuer = await prepareIssuer(env, variant, namespace, suffix);
  const issuerMs = performance.now() - start;
  const ctx = new ScenarioContext(env, variant, namespace, issuer);

  const outcomes = new Map<number, Promise<Outcome>>();
  for (const scenario of TABLE) outcomes.set(scenario.id, runTableScenario(ctx, scenario));
  outcomes.set(30, runScenario30(ctx));
  outcomes.set(31, runScenario31(ctx));
  const settled = Promise.all(outcomes.values());
  let totalMs: number | undefined;
  void settled.then(() => (totalMs = performance.now() - start));

  return {
    namespace,
    issuer,
    outcome: (id) => outcomes.get(id) ?? Promise.reject(new Error(`no scenario ${id}`)),
    settled,
    async summary() {
      const all = await settled;
      const issued = all.filter((o) => o.issued).length;
      const issuances = all.reduce((n, o) => n + o.issuances, 0);
      const failed = all.filter((o) => o.failures.length).map((o) => o.id);
      const slowest = all.reduce((a, b) => ((b.msToReady ?? 0) > (a.msToReady ?? 0) ? b : a));
      return (
        `${variant.title}: ${issued}/${all.length} Certificates issued (${issuances} issuances), ` +
        `${failed.length ? `failing scenarios ${failed.join(',')}` : 'all validations passed'}, ` +
        `total ${Math.round(totalMs ?? performance.now() - start)} ms ` +
        `(issuer Ready ${Math.round(issuerMs)} ms, slowest first issuance #${slowest.id} ${Math.round(slowest.msToReady ?? 0)} ms)` +
        (issuer.caOrigin ? `; CA: ${issuer.caOrigin}` : '')
      );
    },
  };
}
