/**
 * The ResourceDefinition an established CRD serves: names, schemas per version, printer columns, selectable
 * fields.
 */

import { type FieldError, type KubeObject, type StoredObject } from '@certkit/apimachinery';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinitionVersion,
} from 'kubernetes-types/apiextensions/v1.d.ts';
import { type ApplySchema, schemaFromOpenApi, schemaFromSmp } from '../fieldmanager/apply-schema.ts';
import { compileJsonPath, evaluateJsonPath } from './jsonpath.ts';
import { objectMetaSmp } from '../patch/strategic-merge-patch.ts';
import { ALL_VERBS, type ResourceDefinition } from '../registry/resource.ts';
import { humanAge, nameColumn, type TableColumn } from '../registry/printing.ts';
import { admitCustomResourceInPlace, admitCustomResourceStatusInPlace } from '../schema/admit.ts';
import { type JSONSchemaProps } from '../schema/types.ts';
import { unknownCustomResourceFields } from '../schema/prune.ts';
import type { Crd } from './crd-object.ts';
import { customResourceScale } from './scale.ts';
import { compareVersionPriority } from './version-priority.ts';
import { CustomResourceRules } from '../schema/cel/index.ts';

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
  // One scale for the resource: the first served version's that declares one.
  const scalePaths = served.find((v) => v.subresources?.scale)?.subresources?.scale;
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
    ...(scalePaths ? { scale: customResourceScale(scalePaths) } : {}),
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
