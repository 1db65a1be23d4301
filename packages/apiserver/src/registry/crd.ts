import { type FieldError, formatTime, type KubeObject, type StoredObject } from '@certkit/apimachinery';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
} from 'kubernetes-types/apiextensions/v1.d.ts';
import { type ApplySchema, schemaFromOpenApi, schemaFromSmp } from './apply.ts';
import { compileJsonPath, evaluateJsonPath } from './jsonpath.ts';
import { objectMetaSmp } from './patch.ts';
import { ALL_VERBS, humanAge, nameColumn, type ResourceDefinition, type TableColumn } from './resource.ts';
import {
  admitCustomResourceInPlace,
  admitCustomResourceStatusInPlace,
  type JSONSchemaProps,
  unknownCustomResourceFields,
  validateStructuralSchema,
} from './schema.ts';
import { dns1123Label, dns1123Subdomain } from './validation.ts';
import { compileValidationRules, CustomResourceRules } from '../schema/cel/index.ts';

/** Custom resources: validating CustomResourceDefinitions and deriving the ResourceDefinition they serve. */

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

type Crd = CustomResourceDefinition & StoredObject;

/** Orders versions as Kubernetes does: GA before beta before alpha, higher numbers first, others last by name. */
export function compareVersionPriority(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v];
    const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stage, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
  return ra[3].localeCompare(rb[3]);
}

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
    for (const msg of dns1123Subdomain(spec.group))
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
    for (const msg of dns1123Label(value))
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
      errs.push(...structural);
      // As kube: rules compile (and their cost is estimated) only on a structural schema.
      if (structural.length === 0)
        errs.push(...compileValidationRules(schema, `${field}.schema.openAPIV3Schema`).errors);
    }
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

/** What kube-apiserver's CRD controllers write into status once the names are accepted and served. */
export function establishedStatus(crd: Crd, now: string): Crd['status'] {
  const names = crd.spec.names;
  const acceptedNames = {
    ...names,
    singular: names.singular || names.kind.toLowerCase(),
    listKind: names.listKind || `${names.kind}List`,
  };
  const condition = (type: string, reason: string, message: string) => {
    const previous = crd.status?.conditions?.find((c) => c.type === type);
    return {
      type,
      status: 'True',
      lastTransitionTime: previous?.status === 'True' ? previous.lastTransitionTime : now,
      reason,
      message,
    };
  };
  return {
    acceptedNames,
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: [
      ...new Set([
        ...(crd.status?.storedVersions ?? []),
        ...crd.spec.versions.filter((v) => v.storage).map((v) => v.name),
      ]),
    ],
  };
}

function printerColumns(
  version: CustomResourceDefinitionVersion | undefined,
): CustomResourceColumnDefinition[] {
  const columns = version?.additionalPrinterColumns;
  if (columns === undefined) {
    return [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  }
  return columns;
}

/** A cell as the CRD table convertor renders it: strings via JSONPath printing, dates as ages. */
function cell(column: CustomResourceColumnDefinition, value: unknown, now: number): unknown {
  if (value === undefined) return null;
  switch (column.type) {
    case 'date':
      return typeof value === 'string' ? humanAge(value, now) : '<invalid>';
    case 'integer':
      return Number.isInteger(value) ? value : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** Prepares a new CRD as kube-apiserver's CRD controllers would: the cleanup finalizer and an established status. */
export function prepareNewCrd(obj: StoredObject): void {
  const crd = obj as Crd;
  crd.metadata.finalizers = [...new Set([...(crd.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER])];
  crd.status = establishedStatus(crd, formatTime(new Date()));
}

/** Derives the served resource from an established CRD. */
export function definitionFromCrd(crd: Crd): ResourceDefinition {
  const spec = crd.spec;
  const served = spec.versions.filter((v) => v.served);
  const versions = served.map((v) => v.name).sort(compareVersionPriority);
  const preferred = served.find((v) => v.name === versions[0]);
  const columns = printerColumns(preferred);
  const paths = columns.map((c) => compileJsonPath(c.jsonPath));
  const schemas = new Map(
    served.map((v) => [v.name, v.schema?.openAPIV3Schema as JSONSchemaProps | undefined]),
  );
  const applySchemas = new Map<string, ApplySchema>();
  // Each version's CEL rules are compiled once here, not on every write.
  const rules = new Map(
    [...schemas].flatMap(([name, schema]) =>
      schema ? [[name, new CustomResourceRules(schema)] as const] : [],
    ),
  );
  const selectable = (preferred?.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, ''));
  const selectablePaths = selectable.map((f) => compileJsonPath(`.${f}`));
  const tableColumns: TableColumn[] = [
    nameColumn,
    ...columns.map((c) => ({
      name: c.name,
      type: c.type,
      ...(c.format ? { format: c.format } : {}),
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
  ];
  const celErrors = (
    version: string,
    obj: StoredObject,
    old: StoredObject | undefined,
    schemaErrors: FieldError[],
  ): FieldError[] =>
    rules
      .get(version)
      ?.validate(obj as Record<string, unknown>, old as Record<string, unknown> | undefined, schemaErrors) ??
    [];
  return {
    group: spec.group,
    versions,
    resource: spec.names.plural,
    singular: spec.names.singular || spec.names.kind.toLowerCase(),
    kind: spec.names.kind,
    listKind: spec.names.listKind || `${spec.names.kind}List`,
    namespaced: spec.scope === 'Namespaced',
    shortNames: spec.names.shortNames ?? [],
    categories: spec.names.categories ?? [],
    verbs: ALL_VERBS,
    statusSubresource: served.some((v) => v.subresources?.status !== undefined),
    tracksGeneration: true,
    allowUnconditionalUpdate: false,
    custom: true,
    columns: tableColumns,
    cells: (obj, now) => [
      obj.metadata.name,
      ...columns.map((c, i) => cell(c, evaluateJsonPath(paths[i], obj)[0], now)),
    ],
    selectableFields: selectable,
    fieldValues: (obj) =>
      Object.fromEntries(
        selectable.map((f, i) => {
          const v = evaluateJsonPath(selectablePaths[i], obj)[0];
          return [f, v === undefined ? '' : String(v)];
        }),
      ),
    openApiSchema: (version: string) => schemas.get(version),
    unknownFields(obj: KubeObject, version: string): string[] {
      const schema = schemas.get(version);
      return schema ? unknownCustomResourceFields(schema, obj as Record<string, unknown>) : [];
    },
    admit(obj: StoredObject, version: string, old?: StoredObject): FieldError[] {
      const schema = schemas.get(version);
      if (!schema) return [];
      // The store admits its own copy of the object: pruned and defaulted where it is, with no second copy;
      // the metadata object the caller holds stays (the schema does not govern metadata).
      const errors = admitCustomResourceInPlace(schema, obj as Record<string, unknown>);
      return [...errors, ...celErrors(version, obj, old, errors)];
    },
    applySchema(version: string): ApplySchema {
      let schema = applySchemas.get(version);
      if (!schema) {
        schema = schemaFromOpenApi(schemas.get(version), schemaFromSmp(objectMetaSmp));
        applySchemas.set(version, schema);
      }
      return schema;
    },
    admitStatus(obj: StoredObject, version: string, old?: StoredObject): FieldError[] {
      const schema = schemas.get(version);
      if (!schema) return [];
      const errors = admitCustomResourceStatusInPlace(schema, obj as Record<string, unknown>);
      return [...errors, ...celErrors(version, obj, old, errors)];
    },
  };
}
