import type { MetricsRegistry } from '@certkit/runtime';
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

/** cert-manager's per-Certificate gauges: name and help. */
const EXPIRATION = [
  'certmanager_certificate_expiration_timestamp_seconds',
  'The date after which the certificate expires, as seconds since the Unix epoch.',
] as const;
const RENEWAL = [
  'certmanager_certificate_renewal_timestamp_seconds',
  'The time after which the certificate will be renewed, as seconds since the Unix epoch.',
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
 * The three gauges' exposition for these Certificates, HELP and TYPE included. Rendered here in one pass
 * rather than through the registry's gaugeFunc, which takes a label object per series: each Certificate's
 * label text is built once for its five series, which keeps a scrape at 10,000 Certificates to a few ms.
 */
export function renderCertificateGauges(certificates: Iterable<Certificate>): string {
  const header = ([name, help]: readonly [string, string]) => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} gauge`,
  ];
  const expiration = header(EXPIRATION);
  const renewal = header(RENEWAL);
  const ready = header(READY);
  for (const cert of certificates) {
    const labels = labelText(cert);
    expiration.push(`${EXPIRATION[0]}{${labels}} ${seconds(cert.status?.notAfter)}`);
    renewal.push(`${RENEWAL[0]}{${labels}} ${seconds(cert.status?.renewalTime)}`);
    const status = cert.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
    for (const condition of READY_CONDITIONS) {
      ready.push(`${READY[0]}{${labels},condition="${condition}"} ${condition === status ? 1 : 0}`);
    }
  }
  return `${expiration.join('\n')}\n${renewal.join('\n')}\n${ready.join('\n')}\n`;
}

export function registerCertificateMetrics(metrics: MetricsRegistry, ctx: ControllerContext): void {
  const registered = reported.has(metrics);
  reported.set(metrics, ctx);
  if (!registered) {
    metrics.addCollector('certmanager_certificate', () =>
      Promise.resolve(renderCertificateGauges(reported.get(metrics)?.certificates.getStore().values() ?? [])),
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
