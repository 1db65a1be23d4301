/** Validation of a CustomResourceDefinition on create and update (kube's apiextensions validation). */

import { appendErrors, type FieldError, type StoredObject } from '@certkit/apimachinery';
import { compileJsonPath } from './jsonpath.ts';
import { scaleSubresourceErrors } from './scale.ts';
import { type JSONSchemaProps } from '../schema/types.ts';
import { validateStructuralSchema } from '../schema/structural.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '@certkit/apimachinery';
import type { Crd } from './crd-object.ts';
import { compileValidationRules } from '../schema/cel/index.ts';

export function validateCustomResourceDefinition(
  obj: StoredObject,
  old: StoredObject | undefined,
): FieldError[] {
  const crd = obj as Crd;
  const errs: FieldError[] = [];
  const spec = crd.spec;
  if (!spec) return [{ type: 'FieldValueRequired', field: 'spec' }];
  const names = spec.names ?? ({} as Crd['spec']['names']);
  if (!spec.group) errs.push({ type: 'FieldValueRequired', field: 'spec.group' });
  else {
    for (const msg of dns1123SubdomainErrors(spec.group))
      errs.push({ type: 'FieldValueInvalid', field: 'spec.group', value: spec.group, detail: msg });
    if (!spec.group.includes('.')) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.group',
        value: spec.group,
        detail: 'should be a domain with at least one dot',
      });
    }
  }
  for (const field of ['plural', 'singular'] as const) {
    const value = names[field];
    if (!value) {
      if (field === 'plural') errs.push({ type: 'FieldValueRequired', field: `spec.names.${field}` });
      continue;
    }
    for (const msg of dns1123LabelErrors(value))
      errs.push({ type: 'FieldValueInvalid', field: `spec.names.${field}`, value, detail: msg });
  }
  for (const field of ['kind', 'listKind'] as const) {
    const value = names[field];
    if (!value) {
      if (field === 'kind') errs.push({ type: 'FieldValueRequired', field: 'spec.names.kind' });
    } else if (!/^[A-Za-z][A-Za-z0-9]*$/.test(value)) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `spec.names.${field}`,
        value,
        detail: 'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?',
      });
    }
  }
  if (spec.group && names.plural && crd.metadata.name !== `${names.plural}.${spec.group}`) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'metadata.name',
      value: crd.metadata.name,
      detail: `must be spec.names.plural+"."+spec.group`,
    });
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'spec.scope',
      value: spec.scope ?? '',
      detail: 'supported values: "Cluster", "Namespaced"',
    });
  }
  const versions = spec.versions ?? [];
  if (versions.length === 0)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.versions',
      value: versions,
      detail: 'must have exactly one version marked as storage version',
    });
  const storage = versions.filter((v) => v.storage).length;
  if (versions.length > 0 && storage !== 1) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.versions',
      value: versions.map((v) => v.name),
      detail: 'must have exactly one version marked as storage version',
    });
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const field = `spec.versions[${i}]`;
    if (!v.name) errs.push({ type: 'FieldValueRequired', field: `${field}.name` });
    else if (seen.has(v.name))
      errs.push({
        type: 'FieldValueInvalid',
        field: `${field}.name`,
        value: v.name,
        detail: 'must appear only once',
      });
    else seen.add(v.name);
    const schema = v.schema?.openAPIV3Schema as JSONSchemaProps | undefined;
    if (!schema) {
      errs.push({
        type: 'FieldValueRequired',
        field: `${field}.schema.openAPIV3Schema`,
        detail: 'schemas are required',
      });
    } else {
      const structural = validateStructuralSchema(schema, `${field}.schema.openAPIV3Schema`);
      appendErrors(errs, structural);
      // As kube: rules compile (and their cost is estimated) only on a structural schema.
      if (structural.length === 0)
        appendErrors(errs, compileValidationRules(schema, `${field}.schema.openAPIV3Schema`).errors);
    }
    appendErrors(errs, scaleSubresourceErrors(v.subresources?.scale, `${field}.subresources`));
    (v.additionalPrinterColumns ?? []).forEach((col, j) => {
      try {
        compileJsonPath(col.jsonPath);
      } catch (e) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${field}.additionalPrinterColumns[${j}].jsonPath`,
          value: col.jsonPath,
          detail: (e as Error).message,
        });
      }
    });
  });
  if (old) {
    const oldSpec = (old as Crd).spec;
    if (oldSpec.group !== spec.group) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.group',
        value: spec.group,
        detail: 'field is immutable',
      });
    }
    if (oldSpec.names?.plural !== names.plural) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.names.plural',
        value: names.plural,
        detail: 'field is immutable',
      });
    }
  }
  return errs;
}
