/**
 * A custom resource's `scale` subresource from its CRD's paths, as apiextensions-apiserver serves it
 * (registry/customresource/etcd.go scaleFromCustomResource): the replicas and selector read at the simple
 * JSON paths (`.spec.replicas`), 0 or no selector where nothing is set, and spec replicas written back at
 * their path, creating the objects on the way (unstructured.SetNestedField).
 */

import { type FieldError, invalid, required, type StoredObject } from '@certkit/apimachinery';
import type { CustomResourceSubresourceScale } from 'kubernetes-types/apiextensions/v1.d.ts';
import type { ScaleSubresource } from '../registry/resource.ts';

/** splitReplicasPath: the path's fields, without its leading period. */
function fieldsOf(path: string): string[] {
  return path.replace(/^\./, '').split('.');
}

function valueAt(obj: StoredObject, fields: string[]): unknown {
  let at: unknown = obj;
  for (const field of fields) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[field];
  }
  return at;
}

const replicasAt = (obj: StoredObject, fields: string[]): number => {
  const value = valueAt(obj, fields);
  return typeof value === 'number' && Number.isInteger(value) ? value : 0;
};

export function customResourceScale(paths: CustomResourceSubresourceScale): ScaleSubresource {
  const spec = fieldsOf(paths.specReplicasPath);
  const status = fieldsOf(paths.statusReplicasPath);
  const selector = paths.labelSelectorPath ? fieldsOf(paths.labelSelectorPath) : undefined;
  return {
    specReplicas: (obj) => replicasAt(obj, spec),
    statusReplicas: (obj) => replicasAt(obj, status),
    selector: (obj) => {
      const value = selector ? valueAt(obj, selector) : undefined;
      return typeof value === 'string' ? value : '';
    },
    setReplicas: (obj, replicas) => {
      let at = obj as Record<string, unknown>;
      for (const field of spec.slice(0, -1)) {
        const next = at[field];
        if (typeof next !== 'object' || next === null || Array.isArray(next)) at[field] = {};
        at = at[field] as Record<string, unknown>;
      }
      at[spec.at(-1)!] = replicas;
    },
  };
}

/** validateSimpleJSONPath: a path in the dot notation, starting with `.`. */
function simplePathErrors(path: string, field: string): FieldError[] {
  if (path.length === 0) return [invalid(field, path, 'must not be empty')];
  if (path[0] !== '.') return [invalid(field, path, 'must be a simple json path starting with .')];
  return [];
}

/** A path that is required and must lie under one of `under` (`.spec.`), as the CRD's validation words it. */
function scalePathErrors(
  path: string | undefined,
  field: string,
  under: string[],
  where: string,
): FieldError[] {
  if (!path) return [required(field)];
  const errors = simplePathErrors(path, field);
  if (errors.length > 0) return errors;
  return under.some((prefix) => path.startsWith(prefix))
    ? []
    : [invalid(field, path, `should be a json path under ${where}`)];
}

/**
 * A version's scale subresource checked as apiextensions-apiserver's ValidateCustomResourceDefinitionSubresources
 * does: spec replicas under `.spec`, status replicas under `.status`, a label selector (optional) under either.
 */
export function scaleSubresourceErrors(
  scale: CustomResourceSubresourceScale | undefined,
  field: string,
): FieldError[] {
  if (!scale) return [];
  const errors = [
    ...scalePathErrors(scale.specReplicasPath, `${field}.scale.specReplicasPath`, ['.spec.'], '.spec'),
    ...scalePathErrors(
      scale.statusReplicasPath,
      `${field}.scale.statusReplicasPath`,
      ['.status.'],
      '.status',
    ),
  ];
  if (scale.labelSelectorPath)
    errors.push(
      ...scalePathErrors(
        scale.labelSelectorPath,
        `${field}.scale.labelSelectorPath`,
        ['.spec.', '.status.'],
        'either .spec or .status',
      ),
    );
  return errors;
}
