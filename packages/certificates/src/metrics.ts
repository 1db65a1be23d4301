import type { MetricsRegistry } from '@certkit/runtime';
import type { Certificate } from './api/types.ts';
import type { ControllerContext } from './controllers/context.ts';

/**
 * cert-manager's certificate metrics, kept from the Certificate informer's events: expiration and renewal
 * timestamps and readiness per Certificate, and issuances (count and duration) as revisions go up.
 */
export function registerCertificateMetrics(metrics: MetricsRegistry, ctx: ControllerContext): void {
  const labelNames = ['name', 'namespace', 'issuer_name', 'issuer_kind', 'issuer_group'];
  const expiration = metrics.gauge(
    'certmanager_certificate_expiration_timestamp_seconds',
    'The date after which the certificate expires, as seconds since the Unix epoch.',
    labelNames,
  );
  const renewal = metrics.gauge(
    'certmanager_certificate_renewal_timestamp_seconds',
    'The time after which the certificate will be renewed, as seconds since the Unix epoch.',
    labelNames,
  );
  const ready = metrics.gauge(
    'certmanager_certificate_ready_status',
    'The ready status of the certificate.',
    [...labelNames, 'condition'],
  );
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

  const labelsOf = (cert: Certificate) => ({
    name: cert.metadata?.name ?? '',
    namespace: cert.metadata?.namespace ?? '',
    issuer_name: cert.spec?.issuerRef?.name ?? '',
    issuer_kind: cert.spec?.issuerRef?.kind ?? 'Issuer',
    issuer_group: cert.spec?.issuerRef?.group ?? 'cert-manager.io',
  });
  const seconds = (time: string | undefined) => (time ? Date.parse(time) / 1000 : 0);
  const record = (cert: Certificate) => {
    const labels = labelsOf(cert);
    expiration.set(labels, seconds(cert.status?.notAfter));
    renewal.set(labels, seconds(cert.status?.renewalTime));
    const status = cert.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
    for (const condition of ['True', 'False', 'Unknown']) {
      ready.set({ ...labels, condition }, condition === status ? 1 : 0);
    }
  };
  const forget = (cert: Certificate) => {
    const labels = labelsOf(cert);
    expiration.remove(labels);
    renewal.remove(labels);
    for (const condition of ['True', 'False', 'Unknown']) ready.remove({ ...labels, condition });
  };
  // When a Certificate entered Issuing, to time the issuance once its revision goes up.
  const issuingSince = new Map<string, number>();

  ctx.certificates.addEventHandler({
    onAdd: (cert) => record(cert),
    onUpdate: (old, cert) => {
      if (labelsOf(old).issuer_name !== labelsOf(cert).issuer_name) forget(old);
      record(cert);
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
      if (obj) forget(obj);
    },
  });
}
