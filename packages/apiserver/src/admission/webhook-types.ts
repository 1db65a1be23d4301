/**
 * The admissionregistration.k8s.io/v1 webhook types as the admission chain reads them (stored, defaulted
 * objects), and the webhook as the chain calls it: one entry of a configuration, with where it came from.
 */

import type { MetaLabelSelector } from '@certkit/apimachinery';

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface ServiceReference {
  namespace?: string;
  name?: string;
  path?: string;
  port?: number;
}

export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** Base64 of PEM certificates, as []byte is written in JSON. */
  caBundle?: string;
}

export interface MatchCondition {
  name?: string;
  expression?: string;
}

/** A MutatingWebhook or ValidatingWebhook (reinvocationPolicy is the mutating one's alone). */
export interface Webhook {
  name?: string;
  clientConfig?: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: MetaLabelSelector;
  objectSelector?: MetaLabelSelector;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
  matchConditions?: MatchCondition[];
}

/** The AdmissionReview versions this server speaks, preferred first (kube-apiserver's). */
export const ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

export const MUTATING_RESOURCE = 'mutatingwebhookconfigurations';
export const VALIDATING_RESOURCE = 'validatingwebhookconfigurations';
export const ADMISSIONREGISTRATION_GROUP = 'admissionregistration.k8s.io';
