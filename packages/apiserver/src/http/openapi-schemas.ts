import { loadModel, modelDocs, goStructName, type ModelType, type TypeNode } from '../decode/kube-models.ts';
import { objectMetaSmp, type SmpSchema } from '../patch/strategic-merge-patch.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { JSONSchemaProps } from '../schema/types.ts';
import { crdSchemaForSwagger } from './openapi-v2-crd-schema.ts';

/**
 * The schemas of the kinds a group/version serves, as kube-apiserver publishes them in OpenAPI: built-in kinds
 * from their Kubernetes types (kube-models.ts, with the descriptions and required fields of the generated
 * declarations), custom kinds from their CRD's openAPIV3Schema with ObjectMeta for `metadata`. Each kind's
 * schema carries `x-kubernetes-group-version-kind`, which is how `kubectl explain` finds it. Names follow
 * kube-apiserver's (`io.k8s.api.core.v1.Secret`); `refPrefix` is `#/components/schemas/` in v3 and
 * `#/definitions/` in v2.
 */

export type Schemas = Record<string, Record<string, unknown>>;

const META_PACKAGE = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const INT_OR_STRING_DESCRIPTION =
  'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.';
/** Where Swagger 2.0 keeps its schemas; OpenAPI v3's are under `#/components/schemas/`. */
const SWAGGER_REF_PREFIX = '#/definitions/';
/** Types of apimachinery's meta/v1 that the built-in kinds refer to. */
const META_TYPES = new Set(['ObjectMeta', 'OwnerReference', 'ManagedFieldsEntry', 'ListMeta', 'Condition']);

/** The Go package of a group's types, as kube-openapi names definitions. */
function packageOf(group: string, version: string): string {
  if (group === '') return `io.k8s.api.core.${version}`;
  if (group === 'apiextensions.k8s.io')
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}`;
  return `io.k8s.api.${group.split('.')[0]}.${version}`;
}

function definitionName(model: ModelType, pkg: string): string {
  const name = goStructName(model);
  return META_TYPES.has(name) ? `${META_PACKAGE}.${name}` : `${pkg}.${name}`;
}

class SchemaWriter {
  readonly schemas: Schemas = {};
  private readonly refPrefix: string;
  /** Writing Swagger 2.0 (/openapi/v2) rather than OpenAPI v3. */
  private readonly swagger: boolean;
  constructor(refPrefix: string) {
    this.refPrefix = refPrefix;
    this.swagger = refPrefix === SWAGGER_REF_PREFIX;
  }

  /** A described reference to a definition, as kube-openapi writes one in each version. */
  private describedRef($ref: string, description: string): Record<string, unknown> {
    if (!description) return { $ref };
    // A $ref's siblings are ignored in OpenAPI 3.0: kube-openapi wraps the reference to describe the field.
    // Swagger 2.0 readers (kubectl's among them) take the description beside it, and see no type in an allOf.
    return this.swagger ? { $ref, description } : { allOf: [{ $ref }], description };
  }

  /**
   * A reference to apimachinery's IntOrString, defined as kube-openapi generates it: a string of format
   * `int-or-string` in Swagger 2.0, `oneOf` integer or string in v3 (so `kubectl explain` names the type
   * `IntOrString`, as against kube-apiserver).
   */
  private intOrString(description: string): Record<string, unknown> {
    this.schemas[INT_OR_STRING] ??= {
      description: INT_OR_STRING_DESCRIPTION,
      ...(this.swagger ? { type: 'string' } : { oneOf: [{ type: 'integer' }, { type: 'string' }] }),
      format: 'int-or-string',
    };
    return this.describedRef(`${this.refPrefix}${INT_OR_STRING}`, description);
  }

  private ref(model: ModelType, pkg: string, description: string): Record<string, unknown> {
    return this.describedRef(`${this.refPrefix}${definitionName(model, pkg)}`, description);
  }

  private field(node: TypeNode, pkg: string, description: string): Record<string, unknown> {
    const described = (schema: Record<string, unknown>) =>
      description ? { ...schema, description } : schema;
    switch (node.kind) {
      case 'string':
        return described(node.format === 'byte' ? { type: 'string', format: 'byte' } : { type: 'string' });
      case 'integer':
        return described({ type: 'integer', format: node.format });
      case 'number':
        return described({ type: 'number', format: 'double' });
      case 'boolean':
        return described({ type: 'boolean' });
      case 'time':
        return described({ type: 'string', format: node.micro ? 'date-time-micro' : 'date-time' });
      case 'int-or-string':
        return this.intOrString(description);
      case 'any':
        return described({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
      case 'array':
        return described({ type: 'array', items: this.field(node.items, pkg, '') });
      case 'map':
        return described({ type: 'object', additionalProperties: this.field(node.values, pkg, '') });
      case 'model':
        return this.ref(node, pkg, description);
    }
  }

  /**
   * The model's definition and those of every model it refers to. `path` is where the model first sits in
   * the kind (`metadata` for ObjectMeta), for the lists' strategic-merge strategies: kubectl computes its
   * patches from these extensions once a kind has a schema, so they must say what the server merges by.
   */
  async model(model: ModelType, pkg: string, path = '', smp: SmpSchema = {}): Promise<string> {
    const name = definitionName(model, pkg);
    if (this.schemas[name]) return name;
    const docs = await modelDocs(model.name);
    const schema: Record<string, unknown> = { type: 'object' };
    this.schemas[name] = schema;
    if (docs.description) schema.description = docs.description;
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    const nested: [ModelType, string][] = [];
    for (const [json, node] of model.fields) {
      const doc = docs.fields.get(model.memberNames.get(json) ?? json);
      const fieldPath = path === '' ? json : `${path}.${json}`;
      const property = this.field(node, pkg, doc?.description ?? '');
      const strategy = Object.hasOwn(smp, fieldPath) ? smp[fieldPath] : undefined;
      if (strategy) {
        property['x-kubernetes-patch-strategy'] = 'merge';
        if ('mergeKey' in strategy) property['x-kubernetes-patch-merge-key'] = strategy.mergeKey;
      }
      properties[json] = property;
      if (doc?.required) required.push(json);
      const models: ModelType[] = [];
      collectModels(node, models);
      for (const m of models) nested.push([m, fieldPath]);
    }
    schema.properties = properties;
    if (required.length > 0) schema.required = required;
    for (const [m, at] of nested) await this.model(m, pkg, at, smp);
    return name;
  }

  async builtin(def: ResourceDefinition, version: string): Promise<void> {
    const model = await loadModel(def.model!);
    const name = await this.model(model, packageOf(def.group, version), '', def.strategicMerge);
    this.schemas[name]['x-kubernetes-group-version-kind'] = [{ group: def.group, kind: def.kind, version }];
  }

  async custom(def: ResourceDefinition, version: string): Promise<void> {
    const objectMeta = await loadModel('V1ObjectMeta');
    const metaName = await this.model(objectMeta, META_PACKAGE, 'metadata', objectMetaSmp);
    const gvk = { 'x-kubernetes-group-version-kind': [{ group: def.group, kind: def.kind, version }] };
    const name = `${def.group.split('.').reverse().join('.')}.${version}.${def.kind}`;
    const metaRef = `${this.refPrefix}${metaName}`;
    const crdSchema = this.swagger
      ? crdSchemaForSwagger(def.openApiSchema?.(version), metaRef)
      : ((def.openApiSchema?.(version) ?? { type: 'object' }) as Record<string, unknown>);
    // No properties at all, not even metadata's: kubectl would refuse every field it was not told of.
    if (!crdSchema) {
      this.schemas[name] = { type: 'object', ...gvk };
      return;
    }
    const properties = { ...((crdSchema.properties as Record<string, JSONSchemaProps>) ?? {}) } as Record<
      string,
      unknown
    >;
    properties.apiVersion = {
      type: 'string',
      description:
        'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
    };
    properties.kind = {
      type: 'string',
      description:
        'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.',
    };
    properties.metadata = this.describedRef(metaRef, "Standard object's metadata.");
    this.schemas[name] = { ...crdSchema, type: 'object', properties, ...gvk };
  }
}

function collectModels(node: TypeNode, into: ModelType[]): void {
  if (node.kind === 'model') into.push(node);
  else if (node.kind === 'array') collectModels(node.items, into);
  else if (node.kind === 'map') collectModels(node.values, into);
}

/** The schemas of the kinds at group/version, with references under `refPrefix`. */
export async function kindSchemas(
  defs: ResourceDefinition[],
  version: string,
  refPrefix: string,
): Promise<Schemas> {
  const writer = new SchemaWriter(refPrefix);
  for (const def of defs) {
    if (def.model) await writer.builtin(def, version);
    else if (def.custom) await writer.custom(def, version);
  }
  return writer.schemas;
}
