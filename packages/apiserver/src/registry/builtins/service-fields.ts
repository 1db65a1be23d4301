/**
 * Service fields the server only checks and stores, with kube-apiserver's rules and messages
 * (pkg/apis/core/validation ValidateService, and the single-stack IPv4 checks of the Service REST storage):
 * the IP family fields, loadBalancerSourceRanges and the ClientIP session affinity. Without them a Service
 * asking for IPv6 on this IPv4-only server, a policy of "Bogus" or a negative affinity timeout was stored
 * as written.
 */

import ipaddr from 'ipaddr.js';
import {
  duplicate,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
} from '@certkit/apimachinery';

export interface ServiceNetworkFields {
  type?: string;
  ipFamilies?: unknown[];
  ipFamilyPolicy?: string;
  loadBalancerSourceRanges?: string[];
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } | null } | null;
}

const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const IP_FAMILIES = ['IPv4', 'IPv6'];
/** The only family this server's service cluster IP range gives. */
const CONFIGURED_FAMILY = 'IPv4';
/** core.DefaultClientIPServiceAffinitySeconds and core.MaxClientIPServiceAffinitySeconds. */
const DEFAULT_AFFINITY_SECONDS = 10_800;
const MAX_AFFINITY_SECONDS = 86_400;

/** SetDefaults_Service's part for these fields: a ClientIP affinity without a timeout gets 3 hours. */
export function defaultSessionAffinityConfig(spec: ServiceNetworkFields): void {
  if (spec.sessionAffinity !== 'ClientIP') return;
  if (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds != null) return;
  spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_AFFINITY_SECONDS } };
}

function validateIpFamilies(spec: ServiceNetworkFields, errs: FieldError[]): void {
  const policy = spec.ipFamilyPolicy;
  if (policy != null && !IP_FAMILY_POLICIES.includes(policy)) {
    errs.push(notSupported('spec.ipFamilyPolicy', policy, IP_FAMILY_POLICIES));
  }
  const seen = new Set<unknown>();
  (spec.ipFamilies ?? []).forEach((family, i) => {
    const field = `spec.ipFamilies[${i}]`;
    if (!IP_FAMILIES.includes(family as string)) errs.push(notSupported(field, family, IP_FAMILIES));
    if (seen.has(family)) errs.push(duplicate(field, family));
    seen.add(family);
  });
  if (spec.type === 'ExternalName') {
    if (policy != null)
      errs.push(forbidden('spec.ipFamilyPolicy', 'must not be set for ExternalName services'));
    if (spec.ipFamilies?.length)
      errs.push(forbidden('spec.ipFamilies', 'must not be set for ExternalName services'));
    return;
  }
  // What the REST storage of a single-stack server refuses (initIPFamilyFields).
  if (policy === 'RequireDualStack') {
    errs.push(
      invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'),
    );
  }
  (spec.ipFamilies ?? []).forEach((family, i) => {
    if (IP_FAMILIES.includes(family as string) && family !== CONFIGURED_FAMILY) {
      errs.push(invalid(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
    }
  });
}

function validateSourceRanges(spec: ServiceNetworkFields, errs: FieldError[]): void {
  const ranges = spec.loadBalancerSourceRanges ?? [];
  if (ranges.length === 0) return;
  if (spec.type !== 'LoadBalancer') {
    errs.push(forbidden('spec.loadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
  }
  // GetLoadBalancerSourceRanges trims each entry and parses it as a CIDR.
  const parses = (range: string) => {
    try {
      ipaddr.parseCIDR(String(range).trim());
      return true;
    } catch {
      return false;
    }
  };
  if (!ranges.every(parses)) {
    errs.push(
      invalid(
        'spec.loadBalancerSourceRanges',
        `[${ranges.join(' ')}]`,
        'must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 ',
      ),
    );
  }
}

function validateSessionAffinityConfig(spec: ServiceNetworkFields, errs: FieldError[]): void {
  const config = spec.sessionAffinityConfig;
  if ((spec.sessionAffinity ?? 'None') === 'None') {
    if (config != null) {
      errs.push(forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
    }
    return;
  }
  if (spec.sessionAffinity !== 'ClientIP') return;
  if (config == null) {
    errs.push(required('spec.sessionAffinityConfig', 'when session affinity type is ClientIP'));
    return;
  }
  if (config.clientIP == null) {
    errs.push(required('spec.sessionAffinityConfig.clientIP', 'when session affinity type is ClientIP'));
    return;
  }
  const timeout = config.clientIP.timeoutSeconds;
  const field = 'spec.sessionAffinityConfig.clientIP.timeoutSeconds';
  if (timeout == null) {
    errs.push(required(field, 'when session affinity type is ClientIP'));
  } else if (!(timeout > 0 && timeout <= MAX_AFFINITY_SECONDS)) {
    errs.push(invalid(field, timeout, `must be greater than 0 and less than ${MAX_AFFINITY_SECONDS}`));
  }
}

/** The checks above, in ValidateService's order. */
export function validateServiceNetworkFields(spec: ServiceNetworkFields, errs: FieldError[]): void {
  validateSessionAffinityConfig(spec, errs);
  validateSourceRanges(spec, errs);
  validateIpFamilies(spec, errs);
}
