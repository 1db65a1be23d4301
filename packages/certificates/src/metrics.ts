import type { Labels, MetricsRegistry } from '@certkit/runtime';
import type { Certificate } from './api/types.ts';
import type { ControllerContext } from './controllers/context.ts';

/**
 * cert-manager's certificate metrics: expiration and renewal timestamps and readiness per Certificate, read
 * from the Certificate informer's store when scraped, and issuances (count and duration) kept from its events
 * as revisions go up.
 *
 * The per-Certificate gauges are read when scraped rather than kept as series (as the Challenge gauge is,
 * acme/challenges/metrics.ts): a series per Certificate and gauge, with its array of label values, its value
 * and its entry in the metric's tree, cost ~1.3 KB of heap per Certificate for five of them (docs/adr/1142),
 * to say again what the cached Certificate says already. A deleted Certificate's series simply stop, and one
 * whose issuer changes is reported under its new issuer only.
 */

/** The context whose Certificates each registry reports (one per process; see acme/challenges/metrics.ts). */
const reported = new WeakMap<MetricsRegistry, ControllerContext>();

/** The labels of every per-Certificate series, in cert-manager's order. */
type CertificateLabels = Labels &
  Record<'name' | 'namespace' | 'issuer_name' | 'issuer_kind' | 'issuer_group', string>;

/** The Ready condition's status values, one series each, in the order they are exposed. */
const READY_CONDITIONS = ['True', 'False', 'Unknown'] as const;

function labelsOf(cert: Certificate): CertificateLabels {
  return {
    name: cert.metadata?.name ?? '',
    namespace: cert.metadata?.namespace ?? '',
    issuer_name: cert.spec?.issuerRef?.name ?? '',
    issuer_kind: cert.spec?.issuerRef?.kind ?? 'Issuer',
    issuer_group: cert.spec?.issuerRef?.group ?? 'cert-manager.io',
  };
}

const seconds = (time: string | undefined) => (time ? Date.parse(time) / 1000 : 0);

/** `certmanager_certificate_expiration_timestamp_seconds`' series for these Certificates. */
export function* expirationSeries(certificates: Iterable<Certificate>) {
  for (const cert of certificates) yield [labelsOf(cert), seconds(cert.status?.notAfter)] as const;
}

/** `certmanager_certificate_renewal_timestamp_seconds`' series for these Certificates. */
export function* renewalSeries(certificates: Iterable<Certificate>) {
  for (const cert of certificates) yield [labelsOf(cert), seconds(cert.status?.renewalTime)] as const;
}

/** `certmanager_certificate_ready_status`' series: 1 for the Ready condition's status, 0 for the others. */
export function* readySeries(certificates: Iterable<Certificate>) {
  for (const cert of certificates) {
    const labels = labelsOf(cert);
    const status = cert.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
    for (const condition of READY_CONDITIONS) {
      yield [{ ...labels, condition }, condition === status ? 1 : 0] as const;
    }
  }
}

export function registerCertificateMetrics(metrics: MetricsRegistry, ctx: ControllerContext): void {
  const registered = reported.has(metrics);
  reported.set(metrics, ctx);
  if (!registered) {
    const cached = () => reported.get(metrics)?.certificates.getStore().values() ?? [];
    metrics.gaugeFunc(
      'certmanager_certificate_expiration_timestamp_seconds',
      'The date after which the certificate expires, as seconds since the Unix epoch.',
      () => expirationSeries(cached()),
    );
    metrics.gaugeFunc(
      'certmanager_certificate_renewal_timestamp_seconds',
      'The time after which the certificate will be renewed, as seconds since the Unix epoch.',
      () => renewalSeries(cached()),
    );
    metrics.gaugeFunc('certmanager_certificate_ready_status', 'The ready status of the certificate.', () =>
      readySeries(cached()),
    );
  }
  const issuances = metrics.counter(
    'certkit_certificate_issuances_total',
    'Certificates issued (revisions).',
    ['namespace', 'issuer_kind'],
  );
  const durations = metrics.histogram(
    'certkit_certificate_issuance_duration_seconds',
    'From the Issuing condition turning True to the new revision.',
    ['issuer_kind'],
    [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  );

  // When a Certificate entered Issuing, to time the issuance once its revision goes up.
  const issuingSince = new Map<string, number>();

  ctx.certificates.addEventHandler({
    onUpdate: (old, cert) => {
      const key = `${cert.metadata?.namespace}/${cert.metadata?.name}`;
      const issuing = cert.status?.conditions?.find((c) => c.type === 'Issuing' && c.status === 'True');
      if (issuing && !issuingSince.has(key)) issuingSince.set(key, ctx.now().getTime());
      if ((cert.status?.revision ?? 0) > (old.status?.revision ?? 0)) {
        const { namespace, issuer_kind } = labelsOf(cert);
        issuances.inc({ namespace, issuer_kind });
        const since = issuingSince.get(key);
        if (since !== undefined) durations.observe({ issuer_kind }, (ctx.now().getTime() - since) / 1000);
        issuingSince.delete(key);
      }
    },
    onDelete: (cert) => {
      const obj =
        'obj' in cert && 'key' in cert ? (cert.obj as Certificate | undefined) : (cert as Certificate);
      if (obj) issuingSince.delete(`${obj.metadata?.namespace}/${obj.metadata?.name}`);
    },
  });
}
