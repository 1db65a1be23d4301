/** The structural schema of a CRD version as the schema/ modules read it. */

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps a structural schema uses. */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: boolean | JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  /** CEL rules: accepted, never evaluated. */
  'x-kubernetes-validations'?: unknown[];
}

/** Fields every resource has that the schema neither prunes, defaults nor validates at the root. */
export const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
