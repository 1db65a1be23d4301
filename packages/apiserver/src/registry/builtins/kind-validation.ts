/**
 * Field checks several built-in kinds share (Services, Endpoints, EndpointSlices, Pods, Ingresses), with
 * kube-apiserver's messages (pkg/apis/core/validation and k8s.io/apimachinery/pkg/util/validation).
 */

import ipaddr from 'ipaddr.js';
import {
  dns1123LabelErrors,
  type FieldError,
  invalid,
  labelSelectorFromMeta,
  labelValueErrors,
  type MetaLabelSelector,
  notSupported as unsupported,
  qualifiedNameErrors,
  required,
} from '@certkit/apimachinery';

export const PORT_RANGE_DETAIL = 'must be between 1 and 65535, inclusive';
export const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

// apimachinery's field.Error constructors, under the names the built-in kinds' validators use.
export { invalid, required, unsupported };

/** A port number: 1..65535. */
export function validatePortNumber(value: unknown, field: string, errs: FieldError[]): void {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 65535) {
    errs.push(invalid(field, value ?? 0, PORT_RANGE_DETAIL));
  }
}

export function validateProtocol(value: unknown, field: string, errs: FieldError[]): void {
  if (value === undefined || value === '') errs.push(required(field));
  else if (!SUPPORTED_PROTOCOLS.includes(value as string))
    errs.push(unsupported(field, value, SUPPORTED_PROTOCOLS));
}

/** An IANA service name (a named port), as validation.IsValidPortName. */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** An int-or-string port (a container port number, or a named port). */
export function validatePortNumOrName(value: unknown, field: string, errs: FieldError[]): void {
  if (typeof value === 'number') validatePortNumber(value, field, errs);
  else if (typeof value === 'string') {
    for (const msg of portNameErrors(value)) errs.push(invalid(field, value, msg));
  }
}

/** A DNS-1123 label (a port or container name). */
export function validateDnsLabel(value: string, field: string, errs: FieldError[]): void {
  for (const msg of dns1123LabelErrors(value)) errs.push(invalid(field, value, msg));
}

/** Whether the text is an IP address as kube's validation.IsValidIP reads it (no zones, no leading zeros). */
export function isValidIp(text: string): boolean {
  if (ipaddr.IPv4.isValidFourPartDecimal(text))
    return !text.split('.').some((o) => o.length > 1 && o.startsWith('0'));
  return !text.includes('%') && ipaddr.IPv6.isValid(text);
}

export function ipFamily(text: string): 'IPv4' | 'IPv6' | undefined {
  if (!isValidIp(text)) return undefined;
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? 'IPv4' : 'IPv6';
}

export function validateIp(value: unknown, field: string, errs: FieldError[]): void {
  if (typeof value !== 'string' || !isValidIp(value)) {
    errs.push(invalid(field, value ?? '', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
  }
}

/** A map of labels used as a selector (spec.selector of a Service), as ValidateLabels. */
export function validateLabelMap(labels: unknown, field: string, errs: FieldError[]): void {
  if (!labels || typeof labels !== 'object') return;
  for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
    for (const msg of qualifiedNameErrors(key)) errs.push(invalid(field, key, msg));
    for (const msg of labelValueErrors(String(value))) errs.push(invalid(field, value, msg));
  }
}

/** `k=v,k2=v2` with sorted keys, `<none>` when empty: how kubectl prints selectors (labels.FormatLabels). */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${labels![k]}`).join(',');
}

/** Up to `max` items joined by commas, then ` + N more...`, as kube's printers shorten lists. */
export function listWithMore(items: string[], total: number, max = 3): string {
  const shown = items.slice(0, max).join(',');
  return total > max ? `${shown} + ${total - max} more...` : shown;
}

/** A metav1.LabelSelector as kubectl prints it (FormatLabelSelector): `app=web,tier in (a,b)`, `<none>`. */
export function formatLabelSelector(selector: MetaLabelSelector | undefined): string {
  try {
    return labelSelectorFromMeta(selector).toString() || '<none>';
  } catch {
    return '<error>';
  }
}

/** Whether the selector selects the labels (a missing selector selects nothing). */
export function selectorMatches(
  selector: MetaLabelSelector | undefined,
  labels: Record<string, string>,
): boolean {
  try {
    return labelSelectorFromMeta(selector).matches(labels);
  } catch {
    return false;
  }
}

const SELECTOR_OPERATORS = ['DoesNotExist', 'Exists', 'In', 'NotIn'];

/** ValidateLabelSelector: keys and values of matchLabels, operators and values of matchExpressions. */
export function validateLabelSelector(selector: MetaLabelSelector, field: string, errs: FieldError[]): void {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    for (const msg of qualifiedNameErrors(key)) errs.push(invalid(`${field}.matchLabels`, key, msg));
    for (const msg of labelValueErrors(String(value))) errs.push(invalid(`${field}.matchLabels`, value, msg));
  }
  (selector.matchExpressions ?? []).forEach((expr, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    const values = expr.values ?? [];
    if (!SELECTOR_OPERATORS.includes(expr.operator)) {
      errs.push(unsupported(`${at}.operator`, expr.operator ?? '', SELECTOR_OPERATORS));
    } else if ((expr.operator === 'In' || expr.operator === 'NotIn') && values.length === 0) {
      errs.push(required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if ((expr.operator === 'Exists' || expr.operator === 'DoesNotExist') && values.length > 0) {
      errs.push({
        type: 'FieldValueForbidden',
        field: `${at}.values`,
        detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      });
    }
    for (const msg of qualifiedNameErrors(expr.key ?? '')) errs.push(invalid(`${at}.key`, expr.key, msg));
  });
}
