import { readFile } from 'node:fs/promises';

/**
 * The Kubernetes API types of the built-in kinds, field by field, as @kubernetes/client-node generates them from
 * Kubernetes' own OpenAPI document (its `attributeTypeMap` per model: JSON name, type and format). They are
 * loaded one model at a time, on first use, so that a server that never writes a kind never holds its types
 * (see docs/adr/0301-builtin-schemas-from-client-node.md for why this package and not another).
 */

/** A field's type, in the shapes the generated models use. */
export type TypeNode =
  | { kind: 'string'; format: string }
  | { kind: 'integer'; format: 'int32' | 'int64' }
  | { kind: 'number' }
  | { kind: 'boolean' }
  | { kind: 'time'; micro: boolean }
  | { kind: 'int-or-string' }
  | { kind: 'any' }
  | { kind: 'array'; items: TypeNode }
  | { kind: 'map'; values: TypeNode }
  | ModelType;

export interface ModelType {
  kind: 'model';
  /** The client-node class name, e.g. `V1ObjectMeta`. */
  name: string;
  /** By JSON name; filled in when the model is loaded, shared by every field of this type (models recurse). */
  fields: Map<string, TypeNode>;
  /** JSON name → the generated class's member name, which its declaration file documents. */
  memberNames: Map<string, string>;
}

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}

const MODELS_DIR = new URL('./gen/models/', import.meta.resolve('@kubernetes/client-node'));

/** Models whose every field, and every model those refer to, is loaded. */
const complete = new Map<string, ModelType>();
/** Loads run one after the other, so that no load sees another's half-loaded models. */
let loads: Promise<unknown> = Promise.resolve();

/** Finds or starts a model for one load: a model not yet complete is queued for loading. */
type ModelRef = (name: string) => ModelType;

function parseType(type: string, format: string, ref: ModelRef): TypeNode {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) return { kind: 'array', items: parseType(array[1], format, ref) };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return { kind: 'map', values: parseType(map[1], format, ref) };
  switch (type) {
    case 'string':
      return { kind: 'string', format };
    case 'number':
      return format === 'int32' || format === 'int64' ? { kind: 'integer', format } : { kind: 'number' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'Date':
      return { kind: 'time', micro: false };
    case 'V1MicroTime':
      return { kind: 'time', micro: true };
    case 'IntOrString':
      return { kind: 'int-or-string' };
    case 'any':
    case 'object':
      return { kind: 'any' };
  }
  return ref(type);
}

async function loadOne(model: ModelType, ref: ModelRef): Promise<void> {
  const module = (await import(new URL(`${model.name}.js`, MODELS_DIR).href)) as Record<
    string,
    { attributeTypeMap?: Attribute[] }
  >;
  const attributes = module[model.name]?.attributeTypeMap;
  if (!attributes) throw new Error(`@kubernetes/client-node has no model ${model.name}`);
  for (const a of attributes) {
    model.fields.set(a.baseName, parseType(a.type, a.format, ref));
    model.memberNames.set(a.baseName, a.name);
  }
}

/** Loads a model and, breadth-first, every model it refers to; all become complete together. */
async function loadClosure(name: string): Promise<ModelType> {
  const done = complete.get(name);
  if (done) return done;
  const started = new Map<string, ModelType>();
  const pending: ModelType[] = [];
  const ref: ModelRef = (n) => {
    let model = complete.get(n) ?? started.get(n);
    if (!model) {
      model = { kind: 'model', name: n, fields: new Map(), memberNames: new Map() };
      started.set(n, model);
      pending.push(model);
    }
    return model;
  };
  const root = ref(name);
  while (pending.length > 0) await loadOne(pending.shift()!, ref);
  for (const [n, model] of started) complete.set(n, model);
  return root;
}

/** The model, with every model it refers to, loaded. */
export function loadModel(name: string): Promise<ModelType> {
  const done = complete.get(name);
  if (done) return Promise.resolve(done);
  const load = loads.then(() => loadClosure(name));
  loads = load.catch(() => undefined);
  return load;
}

/** The Go type name of a model, as Go's decoder names it in errors: `V1ObjectMeta` → `ObjectMeta`. */
export function goStructName(model: ModelType): string {
  return model.name.replace(/^[A-Za-z]*?V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])/, '');
}

/** The Go type of a field, as Go's decoder prints it (`map[string]string`, `[]v1.OwnerReference`, `int32`). */
export function goTypeName(node: TypeNode): string {
  switch (node.kind) {
    case 'string':
      return node.format === 'byte' ? '[]uint8' : 'string';
    case 'integer':
      return node.format;
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'time':
      return node.micro ? 'v1.MicroTime' : 'v1.Time';
    case 'int-or-string':
      return 'intstr.IntOrString';
    case 'any':
      return 'interface {}';
    case 'array':
      return `[]${goTypeName(node.items)}`;
    case 'map':
      return `map[string]${goTypeName(node.values)}`;
    case 'model':
      return `v1.${goStructName(node)}`;
  }
}

/** What the generated declarations say of a model besides types: descriptions and required fields. */
export interface ModelDocs {
  description: string;
  fields: Map<string, { description: string; required: boolean }>;
}

const docs = new Map<string, Promise<ModelDocs>>();

/**
 * Descriptions and required fields from the model's generated declaration file, where the generator writes the
 * OpenAPI descriptions as doc comments and marks optional fields with `?`. Read only to serve OpenAPI.
 */
export function modelDocs(name: string): Promise<ModelDocs> {
  let found = docs.get(name);
  if (!found) {
    found = readFile(new URL(`${name}.d.ts`, MODELS_DIR), 'utf8').then(parseDeclaration, () => ({
      description: '',
      fields: new Map(),
    }));
    docs.set(name, found);
  }
  return found;
}

function commentText(comment: string | undefined): string {
  if (!comment) return '';
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, ''))
    .join('\n')
    .trim()
    .replace(/\\(['"])/g, '$1');
}

function parseDeclaration(text: string): ModelDocs {
  const classAt = text.indexOf('export declare class');
  const head = text.slice(0, Math.max(classAt, 0));
  const classComment = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*$/.exec(head);
  const fields = new Map<string, { description: string; required: boolean }>();
  const member = /(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*)?'([^']+)'(\??):/g;
  for (const m of text.slice(classAt).matchAll(member)) {
    fields.set(m[2], { description: commentText(m[1]), required: m[3] !== '?' });
  }
  return { description: commentText(classComment?.[1]), fields };
}
