/**
 * Renewal windows end to end: the whole certificate controller on the embedded API server (the conformance
 * environment) with a SelfSigned Issuer. A Certificate with a window gets a status.renewalTime inside it; one
 * whose windows can never be satisfied is Ready=False WindowError and renews at its renewBefore time anyway,
 * with upstream's Warning events.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import type { Certificate, CertificateSpec, IssuerReference } from '../../../api/types.ts';
import {
  describeCertificate,
  type Environment,
  eventually,
  prepareIssuer,
  startEnvironment,
  VARIANTS,
} from '@certkit/testenv/conformance/environment';

const ns = 'renewal-windows';
let env: Environment;
let issuerRef: IssuerReference;

before(async () => {
  env = await startEnvironment();
  await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
  const selfSigned = VARIANTS.find((v) => v.kind === 'Issuer' && v.type === 'SelfSigned')!;
  ({ issuerRef } = await prepareIssuer(env, selfSigned, ns, 'windows'));
});

after(async () => {
  await env?.close();
});

const condition = (cert: Certificate, type: string) => cert.status?.conditions?.find((c) => c.type === type);

function create(name: string, spec: Partial<CertificateSpec>): Promise<Certificate> {
  return env.certificates.create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: ns },
    spec: { secretName: `${name}-tls`, issuerRef, dnsNames: [`${name}.example`], ...spec },
  });
}

function waitFor(name: string, predicate: (cert: Certificate) => boolean, what: string, timeoutMs = 30_000) {
  let last: Certificate | undefined;
  return eventually(
    async () => {
      last = await env.certificates.get(ns, name);
      return predicate(last) ? last : undefined;
    },
    `${name}: ${what}`,
    timeoutMs,
    50,
    () => describeCertificate(last),
  );
}

/** Events about a Certificate, as `kubectl describe` lists them. */
async function eventsOf(name: string): Promise<{ type?: string; reason?: string; message?: string }[]> {
  const list = await env.admin.resource(builtins.events).list(ns);
  return (
    list.items as { involvedObject?: { name?: string }; type?: string; reason?: string; message?: string }[]
  )
    .filter((e) => e.involvedObject?.name === name)
    .map(({ type, reason, message }) => ({ type, reason, message }));
}

/** Wall clock in a zone, read with Intl (independently of the code under test). */
function wallClock(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(ms);
  const field = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return { hour: field('hour'), minute: field('minute'), second: field('second') };
}

/** renewBefore's time (the default: two thirds in), truncated to the second. */
function desiredRenewal(cert: Certificate): number {
  const notBefore = Date.parse(cert.status!.notBefore!);
  const notAfter = Date.parse(cert.status!.notAfter!);
  return Math.floor((notAfter - (notAfter - notBefore) / 3) / 1000) * 1000;
}

describe('renewal windows on the embedded API server', () => {
  it('puts status.renewalTime at the opening of the next window after the renewBefore time', async () => {
    // A daily window in Denver opening 6½ hours (in Denver's clock) after the hour renewBefore asks for, so
    // that the renewBefore time itself is never inside it.
    const desiredSoon = Date.now() + 60 * 24 * 3600_000;
    const hour = (wallClock(desiredSoon, 'America/Denver').hour + 6) % 24;
    const window = { timezone: 'America/Denver', cron: `30 ${hour} * * *`, windowDuration: '1h' };
    await create('windowed', { renewal: { policy: 'RenewBefore', windows: [window] } });

    const cert = await waitFor(
      'windowed',
      (c) => condition(c, 'Ready')?.status === 'True' && c.status?.renewalTime !== undefined,
      'Ready with a renewal time',
    );
    const renewal = Date.parse(cert.status!.renewalTime!);
    const desired = desiredRenewal(cert);
    assert.deepEqual(wallClock(renewal, 'America/Denver'), { hour, minute: 30, second: 0 });
    assert.ok(
      renewal > desired,
      `${cert.status!.renewalTime} after renewBefore's ${new Date(desired).toISOString()}`,
    );
    assert.ok(renewal - desired < 25 * 3600_000, 'the first opening after it');
    assert.equal(condition(cert, 'Ready')?.reason, 'Ready');
  });

  it('renews at the renewBefore time, Ready=False WindowError, when no window time exists', async () => {
    // Feb 30 never comes. A 1h certificate renewing 10 s after issuance.
    await create('never', {
      duration: '1h',
      renewBefore: '59m50s',
      renewal: { policy: 'RenewBefore', windows: [{ cron: '0 0 30 2 *', windowDuration: '1h' }] },
    });
    const first = await waitFor(
      'never',
      (c) => c.status?.revision === 1 && condition(c, 'Ready')?.reason === 'WindowError',
      'issued, Ready=False WindowError',
    );
    const ready = condition(first, 'Ready')!;
    assert.equal(ready.status, 'False');
    assert.match(
      ready.message!,
      /^Could not calculate renewal time: cannot find a time with the given windows between \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC and .* for: /,
    );
    // The renewal time is renewBefore's, 10 s after notBefore.
    assert.equal(Date.parse(first.status!.renewalTime!), Date.parse(first.status!.notBefore!) + 10_000);

    await waitFor('never', (c) => (c.status?.revision ?? 0) >= 2, 'renewed', 40_000);
    const events = await eventually(
      async () => {
        const all = await eventsOf('never');
        return all.some((e) =>
          e.message?.startsWith('Renewing certificate without satisfying renewal windows at'),
        )
          ? all
          : undefined;
      },
      'the renewal events',
      10_000,
    );
    assert.ok(
      events.some((e) => e.type === 'Warning' && e.reason === 'WindowError' && e.message === ready.message),
      `readiness warning in ${JSON.stringify(events)}`,
    );
    const noTime = ready.message!.slice('Could not calculate renewal time: '.length);
    assert.ok(
      events.some(
        (e) =>
          e.type === 'Warning' &&
          e.reason === 'WindowError' &&
          e.message === `Renewing certificate without satisfying renewal windows due to ${noTime}`,
      ),
      `trigger warning in ${JSON.stringify(events)}`,
    );
    assert.ok(
      events.some(
        (e) =>
          e.type === 'Normal' &&
          e.reason === 'Issuing' &&
          e.message ===
            `Renewing certificate without satisfying renewal windows at: ${first.status!.renewalTime}`,
      ),
      `Issuing event in ${JSON.stringify(events)}`,
    );
    await env.certificates.delete(ns, 'never');
  });
});
