/**
 * Small constructors for structural OpenAPI v3 schemas, and the pieces the cert-manager.io kinds share.
 * Lists are `x-kubernetes-list-type: atomic` and conditions a `map` keyed by type, as controller-gen
 * writes them for cert-manager, so that server-side apply merges them the same way.
 */

import type { JSONSchemaProps } from 'kubernetes-types/apiextensions/v1.d.ts';
import { KEY_USAGES } from '../constants.ts';

/** JSONSchemaProps with the Kubernetes extensions structural schemas use (kubernetes-types omits them). */
export interface Schema extends Omit<JSONSchemaProps, 'properties' | 'items' | 'additionalProperties'> {
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
}

export function string(description: string, extra: Partial<Schema> = {}): Schema {
  return { description, type: 'string', ...extra };
}

export function boolean(description: string): Schema {
  return { description, type: 'boolean' };
}

export function integer(description: string, format?: 'int32' | 'int64'): Schema {
  return format ? { description, type: 'integer', format } : { description, type: 'integer' };
}

/** An RFC 3339 timestamp (metav1.Time). */
export function dateTime(description: string): Schema {
  return string(description, { format: 'date-time' });
}

/** A Go []byte, base64 on the wire. */
export function bytes(description: string): Schema {
  return string(description, { format: 'byte' });
}

export function oneOf(description: string, values: readonly string[]): Schema {
  return string(description, { enum: [...values] });
}

export function object(description: string, properties: Record<string, Schema>, required?: string[]): Schema {
  const schema: Schema = { description, type: 'object', properties };
  return required ? { ...schema, required } : schema;
}

/** An object whose unknown fields are kept: for configuration of issuers this controller does not run. */
export function openObject(
  description: string,
  properties?: Record<string, Schema>,
  required?: string[],
): Schema {
  const schema: Schema = { description, type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  if (properties) Object.assign(schema, { properties });
  return required ? { ...schema, required } : schema;
}

export function list(description: string, items: Schema): Schema {
  return { description, type: 'array', items, 'x-kubernetes-list-type': 'atomic' };
}

export function stringList(description: string): Schema {
  return list(description, { type: 'string' });
}

export function stringMap(description: string): Schema {
  return { description, type: 'object', additionalProperties: { type: 'string' } };
}

// ---------------------------------------------------------------------------------------------------------
// Shared pieces (pkg/apis/meta/v1 and the conditions every kind carries)

export function localObjectReference(description: string): Schema {
  return object(description, { name: string('Name of the resource being referred to.') }, ['name']);
}

export function secretKeySelector(description: string): Schema {
  return object(
    description,
    {
      name: string('Name of the Secret being referred to.'),
      key: string(
        'The key of the entry in the Secret to use. Some fields default it; otherwise it is required.',
      ),
    },
    ['name'],
  );
}

export function serviceAccountRef(description: string): Schema {
  return object(
    description,
    {
      name: string('Name of the ServiceAccount used to request a token.'),
      audiences: stringList('Additional audiences for the requested token.'),
    },
    ['name'],
  );
}

export function issuerRef(description: string): Schema {
  return object(
    description,
    {
      name: string('Name of the issuer being referred to.'),
      kind: string('Kind of the issuer being referred to. Defaults to Issuer.'),
      group: string('Group of the issuer being referred to. Defaults to cert-manager.io.'),
    },
    ['name'],
  );
}

export function usages(description: string): Schema {
  return list(
    description,
    oneOf('A key usage or extended key usage; see RFC 5280 §4.2.1.3 and §4.2.1.12.', KEY_USAGES),
  );
}

/** `status.conditions`, keyed by type; `observedGeneration` only where the Go type has it. */
export function conditions(description: string, withObservedGeneration: boolean): Schema {
  const properties: Record<string, Schema> = {
    type: string('Type of the condition.'),
    status: oneOf('Status of the condition, one of True, False, Unknown.', ['True', 'False', 'Unknown']),
    lastTransitionTime: dateTime('When the condition last changed status.'),
    reason: string("Machine-readable reason for the condition's last transition."),
    message: string('Human-readable details of the last transition.'),
  };
  if (withObservedGeneration) {
    properties.observedGeneration = integer('The .metadata.generation the condition was set from.', 'int64');
  }
  return {
    description,
    type: 'array',
    items: object('A condition of the resource.', properties, ['status', 'type']),
    'x-kubernetes-list-map-keys': ['type'],
    'x-kubernetes-list-type': 'map',
  };
}

/** The root of a kind's schema: apiVersion, kind, metadata, spec and status. */
export function resource(description: string, spec: Schema, status: Schema, required?: string[]): Schema {
  return object(
    description,
    {
      apiVersion: string(
        'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
      ),
      kind: string(
        'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.',
      ),
      metadata: { type: 'object' },
      spec,
      status,
    },
    required,
  );
}
