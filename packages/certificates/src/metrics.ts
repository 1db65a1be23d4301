import type { MetricsRegistry } from '@certkit/runtime';
import type { Certificate } from './api/types.ts';
import type { ControllerContext } from './controllers/context.ts';

/**
 * cert-manager's certificate metrics: expiry, validity start, renewal and readiness per Certificate, read
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

/**
 * cert-manager's per-Certificate gauges: name and help, as its controller writes them (the help too, so that a
 * scrape diffed against cert-manager's shows only values). not_after and not_before came in cert-manager 1.18;
 * expiration_timestamp_seconds, older, says the same as not_after and is kept for the dashboards that query it.
 */
const EXPIRATION = [
  'certmanager_certificate_expiration_timestamp_seconds',
  'The timestamp after which the certificate expires, expressed in Unix Epoch Time.',
] as const;
const NOT_AFTER = [
  'certmanager_certificate_not_after_timestamp_seconds',
  'The timestamp after which the certificate is invalid, expressed as a Unix Epoch Time.',
] as const;
const NOT_BEFORE = [
  'certmanager_certificate_not_before_timestamp_seconds',
  'The timestamp before which the certificate is invalid, expressed as a Unix Epoch Time.',
] as const;
const RENEWAL = [
  'certmanager_certificate_renewal_timestamp_seconds',
  'The timestamp after which the certificate should be renewed, expressed in Unix Epoch Time.',
] as const;
const READY = ['certmanager_certificate_ready_status', 'The ready status of the certificate.'] as const;

/** The Ready condition's status values, one series each, in the order they are exposed. */
const READY_CONDITIONS = ['True', 'False', 'Unknown'] as const;

const NEEDS_ESCAPE = /[\\"\n]/;

/** A label value as the exposition format writes it between quotes. */
function escapeLabel(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** A Certificate's labels, rendered: name, namespace, issuer_name, issuer_kind, issuer_group (cert-manager's order). */
function labelText(cert: Certificate): string {
  const name = escapeLabel(cert.metadata?.name ?? '');
  const namespace = escapeLabel(cert.metadata?.namespace ?? '');
  const issuer = cert.spec?.issuerRef;
  return (
    `name="${name}",namespace="${namespace}",issuer_name="${escapeLabel(issuer?.name ?? '')}",` +
    `issuer_kind="${escapeLabel(issuer?.kind ?? 'Issuer')}",issuer_group="${escapeLabel(issuer?.group ?? 'cert-manager.io')}"`
  );
}

const seconds = (time: string | undefined) => (time ? Date.parse(time) / 1000 : 0);

/**
 * The five gauges' exposition for these Certificates, HELP and TYPE included. Rendered here in one pass
 * rather than through the registry's gaugeFunc, which takes a label object per series: each Certificate's
 * label text is built once for its seven series, which keeps a scrape at 10,000 Certificates to a few ms.
 */
export function renderCertificateGauges(certificates: Iterable<Certificate>): string {
  const header = ([name, help]: readonly [string, string]) => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} gauge`,
  ];
  const expiration = header(EXPIRATION);
  const notAfter = header(NOT_AFTER);
  const notBefore = header(NOT_BEFORE);
  const renewal = header(RENEWAL);
  const ready = header(READY);
  for (const cert of certificates) {
    const labels = labelText(cert);
    expiration.push(`${EXPIRATION[0]}{${labels}} ${seconds(cert.status?.notAfter)}`);
    notAfter.push(`${NOT_AFTER[0]}{${labels}} ${seconds(cert.status?.notAfter)}`);
    notBefore.push(`${NOT_BEFORE[0]}{${labels}} ${seconds(cert.status?.notBefore)}`);
    renewal.push(`${RENEWAL[0]}{${labels}} ${seconds(cert.status?.renewalTime)}`);
    const status = cert.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
    for (const condition of READY_CONDITIONS) {
      ready.push(`${READY[0]}{${labels},condition="${condition}"} ${condition === status ? 1 : 0}`);
    }
  }
  return [expiration, notAfter, notBefore, renewal, ready].map((lines) => `${lines.join('\n')}\n`).join('');
}

/**
 * cert-manager's clock metrics: the controller's time when scraped, which alerting rules subtract expiry
 * timestamps from (`certmanager_certificate_expiration_timestamp_seconds - certmanager_clock_time_seconds`),
 * so that the difference is taken on the controller's clock rather than Prometheus's. The counter is the old
 * name (cert-manager calls it deprecated but still serves it); the gauge replaced it.
 */
export function renderClockMetrics(now: Date): string {
  const seconds = Math.floor(now.getTime() / 1000);
  return [
    '# HELP certmanager_clock_time_seconds DEPRECATED: use clock_time_seconds_gauge instead. The clock time given in seconds (from 1970/01/01 UTC).',
    '# TYPE certmanager_clock_time_seconds counter',
    `certmanager_clock_time_seconds ${seconds}`,
    '# HELP certmanager_clock_time_seconds_gauge The clock time given in seconds (from 1970/01/01 UTC).',
    '# TYPE certmanager_clock_time_seconds_gauge gauge',
    `certmanager_clock_time_seconds_gauge ${seconds}`,
    '',
  ].join('\n');
}

export function registerCertificateMetrics(metrics: MetricsRegistry, ctx: ControllerContext): void {
  const registered = reported.has(metrics);
  reported.set(metrics, ctx);
  if (!registered) {
    metrics.addCollector('certmanager_certificate', () =>
      Promise.resolve(renderCertificateGauges(reported.get(metrics)?.certificates.getStore().values() ?? [])),
    );
    metrics.addCollector('certmanager_clock_time', () =>
      Promise.resolve(renderClockMetrics(reported.get(metrics)?.now() ?? new Date())),
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
        const namespace = cert.metadata?.namespace ?? '';
        const issuer_kind = cert.spec?.issuerRef?.kind ?? 'Issuer';
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
