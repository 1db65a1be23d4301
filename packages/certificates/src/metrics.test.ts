/**
 * cert-manager's per-Certificate gauges (metrics.ts), read from the Certificate informer's store when scraped:
 * the values and labels of each Certificate as the cache holds it, and no series kept of their own, so that a
 * Certificate whose issuer changes or that is deleted is reported as it now is.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/apimachinery';
import {
  certificate,
  condition,
  FakeEnvironment,
  ISSUED_AT,
  NAMESPACE,
} from '@certkit/testenv/controllers/fake-environment';
import type { Certificate } from './api/types.ts';
import { certificatesRef } from './controllers/refs.ts';
import { registerCertificateMetrics } from './metrics.ts';

const NOT_AFTER = '2026-03-01T03:00:00Z';
const RENEWAL = '2026-03-01T02:00:00Z';
const NOT_BEFORE = '2025-12-01T03:00:00Z';

function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`));
}

/** Scrapes until `check` passes (the informer sees a write a turn of the event loop later). */
async function eventually(check: () => Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (err) {
      if (i >= 200) throw err;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

describe('certificate metrics', () => {
  it('reports each cached Certificate: expiry, renewal and Ready status, with its issuer', async () => {
    const ready = certificate(
      {},
      {
        notAfter: NOT_AFTER,
        notBefore: NOT_BEFORE,
        renewalTime: RENEWAL,
        conditions: [condition('Ready', 'True', 'Ready', 'Certificate is up to date', ISSUED_AT)],
      },
    );
    const pending = certificate({ issuerRef: { name: 'acme', kind: 'ClusterIssuer' } }, undefined, 'api');
    const env = await FakeEnvironment.start({ certificates: [ready, pending] });
    try {
      const registry = new MetricsRegistry();
      registerCertificateMetrics(registry, env.ctx);
      const web = `name="web",namespace="${NAMESPACE}",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert-manager.io"`;
      const api = `name="api",namespace="${NAMESPACE}",issuer_name="acme",issuer_kind="ClusterIssuer",issuer_group="cert-manager.io"`;
      const text = await registry.scrape();
      assert.match(text, /^# TYPE certmanager_certificate_expiration_timestamp_seconds gauge$/m);
      assert.match(text, /^# TYPE certmanager_certificate_ready_status gauge$/m);
      assert.deepEqual(samples(text, 'certmanager_certificate_expiration_timestamp_seconds').sort(), [
        `certmanager_certificate_expiration_timestamp_seconds{${api}} 0`,
        `certmanager_certificate_expiration_timestamp_seconds{${web}} ${Date.parse(NOT_AFTER) / 1000}`,
      ]);
      // cert-manager 1.18's pair: the certificate's validity window, 0 while none is issued.
      assert.deepEqual(samples(text, 'certmanager_certificate_not_after_timestamp_seconds').sort(), [
        `certmanager_certificate_not_after_timestamp_seconds{${api}} 0`,
        `certmanager_certificate_not_after_timestamp_seconds{${web}} ${Date.parse(NOT_AFTER) / 1000}`,
      ]);
      assert.deepEqual(samples(text, 'certmanager_certificate_not_before_timestamp_seconds').sort(), [
        `certmanager_certificate_not_before_timestamp_seconds{${api}} 0`,
        `certmanager_certificate_not_before_timestamp_seconds{${web}} ${Date.parse(NOT_BEFORE) / 1000}`,
      ]);
      assert.deepEqual(samples(text, 'certmanager_certificate_renewal_timestamp_seconds').sort(), [
        `certmanager_certificate_renewal_timestamp_seconds{${api}} 0`,
        `certmanager_certificate_renewal_timestamp_seconds{${web}} ${Date.parse(RENEWAL) / 1000}`,
      ]);
      // One series per status of the Ready condition, 1 for the one it has; none yet reads as Unknown.
      assert.deepEqual(samples(text, 'certmanager_certificate_ready_status').sort(), [
        `certmanager_certificate_ready_status{${api},condition="False"} 0`,
        `certmanager_certificate_ready_status{${api},condition="True"} 0`,
        `certmanager_certificate_ready_status{${api},condition="Unknown"} 1`,
        `certmanager_certificate_ready_status{${web},condition="False"} 0`,
        `certmanager_certificate_ready_status{${web},condition="True"} 1`,
        `certmanager_certificate_ready_status{${web},condition="Unknown"} 0`,
      ]);
    } finally {
      await env.stop();
    }
  });

  it('follows the cache: a new issuer replaces the old labels, a deleted Certificate has no series', async () => {
    const env = await FakeEnvironment.start({
      certificates: [certificate(), certificate({}, undefined, 'api')],
    });
    try {
      const registry = new MetricsRegistry();
      registerCertificateMetrics(registry, env.ctx);
      const certificates = env.client.resource<Certificate>(certificatesRef);
      const web = await certificates.get(NAMESPACE, 'web');
      await certificates.update({ ...web, spec: { ...web.spec, issuerRef: { name: 'other' } } });
      await certificates.delete(NAMESPACE, 'api');
      await eventually(async () => {
        const text = await registry.scrape();
        const expiry = samples(text, 'certmanager_certificate_expiration_timestamp_seconds');
        assert.deepEqual(expiry, [
          `certmanager_certificate_expiration_timestamp_seconds{name="web",namespace="${NAMESPACE}",issuer_name="other",issuer_kind="Issuer",issuer_group="cert-manager.io"} 0`,
        ]);
        assert.equal(samples(text, 'certmanager_certificate_ready_status').length, 3);
      });
    } finally {
      await env.stop();
    }
  });

  it('exposes the five families, HELP and TYPE, with no Certificate at all', async () => {
    const env = await FakeEnvironment.start({});
    try {
      const registry = new MetricsRegistry();
      registerCertificateMetrics(registry, env.ctx);
      const text = await registry.scrape();
      for (const name of [
        'certmanager_certificate_expiration_timestamp_seconds',
        'certmanager_certificate_not_after_timestamp_seconds',
        'certmanager_certificate_not_before_timestamp_seconds',
        'certmanager_certificate_renewal_timestamp_seconds',
        'certmanager_certificate_ready_status',
      ]) {
        assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'));
        assert.match(text, new RegExp(`^# TYPE ${name} gauge$`, 'm'));
        assert.deepEqual(samples(text, name), []);
      }
    } finally {
      await env.stop();
    }
  });

  it("reports the controller's clock as cert-manager does, a deprecated counter and a gauge", async () => {
    const env = await FakeEnvironment.start({});
    try {
      const registry = new MetricsRegistry();
      registerCertificateMetrics(registry, env.ctx);
      const text = await registry.scrape();
      const now = Math.floor(env.ctx.now().getTime() / 1000);
      assert.match(text, /^# TYPE certmanager_clock_time_seconds counter$/m);
      assert.match(text, /^# TYPE certmanager_clock_time_seconds_gauge gauge$/m);
      assert.match(
        text,
        /^# HELP certmanager_clock_time_seconds DEPRECATED: use clock_time_seconds_gauge instead\./m,
      );
      assert.match(text, new RegExp(`^certmanager_clock_time_seconds ${now}$`, 'm'));
      assert.match(text, new RegExp(`^certmanager_clock_time_seconds_gauge ${now}$`, 'm'));
    } finally {
      await env.stop();
    }
  });
});
