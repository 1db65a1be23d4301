/**
 * Server-side apply, the structured-merge-diff (sigs.k8s.io/structured-merge-diff) subset the server
 * implements: field sets, merging an applied configuration into a live object, comparing two objects and
 * removing fields. Lists follow their schema (`x-kubernetes-list-type` map / set / atomic); maps merge
 * member by member unless `x-kubernetes-map-type: atomic`.
 *
 * Paths are arrays of path elements in kube's FieldsV1 spelling: `f:<field>`, `k:{"key":"value"}` (keys
 * sorted by name), `v:<json>` for set items.
 */

import { cloneJson, isObject, jsonEqual, type JsonObject, newBadRequest } from '@certkit/apimachinery';
import type { SmpSchema } from '../patch/strategic-merge-patch.ts';
import type { JSONSchemaProps } from '../schema/types.ts';

/** The shape of a value as far as apply cares. */
export interface ApplySchema {
  /** Declared members (struct fields); a member not declared is a map entry. */
  properties?: Readonly<Record<string, ApplySchema>>;
  /** Every member counts as declared (built-in kinds, whose Go structs are not described here). */
  allDeclared?: boolean;
  /** Schema of undeclared members. */
  additional?: ApplySchema;
  items?: ApplySchema;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: readonly string[];
  atomicMap?: boolean;
}

const untyped: ApplySchema = {};

function child(schema: ApplySchema, key: string): { schema: ApplySchema; declared: boolean } {
  const declared =
    schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
  if (declared) return { schema: declared, declared: true };
  if (schema.allDeclared) return { schema: { allDeclared: true }, declared: true };
  return { schema: schema.additional ?? untyped, declared: false };
}

// ---------------------------------------------------------------------------------------------------------
// Schemas

/**
 * A built-in kind's schema from its strategic-merge-patch strategies (kube-openapi's schemaconv rules: a
 * merge key makes a list-map, a primitive merge a set). Other lists are atomic.
 */
export function schemaFromSmp(smp: SmpSchema): ApplySchema {
  type Node = ApplySchema & { properties: Record<string, Node>; items?: Node };
  const node = (): Node => ({ properties: {}, allDeclared: true });
  const root = node();
  const entries = Object.entries(smp).sort(([a], [b]) => a.split('.').length - b.split('.').length);
  for (const [path, strategy] of entries) {
    let at = root;
    for (const part of path.split('.')) {
      if (at.listType) at = at.items ??= node();
      at = at.properties[part] ??= node();
    }
    if ('mergeKey' in strategy) {
      at.listType = 'map';
      at.listMapKeys = [strategy.mergeKey];
    } else at.listType = 'set';
  }
  return root;
}

/** A custom resource's schema from its CRD's openAPIV3Schema; metadata is ObjectMeta's. */
export function schemaFromOpenApi(schema: JSONSchemaProps | undefined, metadata: ApplySchema): ApplySchema {
  const root = schema ? convert(schema) : {};
  return { ...root, properties: { ...root.properties, metadata } };
}

function convert(s: JSONSchemaProps): ApplySchema {
  const out: ApplySchema & { properties?: Record<string, ApplySchema> } = {};
  if (s.properties) {
    out.properties = {};
    for (const [k, v] of Object.entries(s.properties)) out.properties[k] = convert(v);
  }
  if (isObject(s.additionalProperties)) out.additional = convert(s.additionalProperties as JSONSchemaProps);
  if (s.items && isObject(s.items)) out.items = convert(s.items);
  if (s.type === 'array') {
    const t = s['x-kubernetes-list-type'];
    out.listType = t === 'map' || t === 'set' ? t : 'atomic';
    if (t === 'map') out.listMapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  }
  if (s['x-kubernetes-map-type'] === 'atomic') out.atomicMap = true;
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Paths and field sets

export type Path = readonly string[];
const SEP = '\u0000';

/**
 * The key of `path` followed by `pe`, from the key of `path` (its elements joined): built element by element
 * as a walk descends, so that no path is joined from scratch (joining was most of an apply's time).
 */
function childKey(path: Path, key: string, pe: string): string {
  return path.length === 0 ? pe : key + SEP + pe;
}

/**
 * A set of paths, keyed by their joined elements, so that union, difference and intersection are linear in
 * the sets' sizes (a ConfigMap with 20,000 keys has a set of 20,000 paths).
 */
export class FieldSet {
  readonly paths = new Map<string, Path>();
  /** Keys of every proper prefix of a member: what hasBelow asks, built on first use after a change. */
  #prefixes: Set<string> | undefined;
  static of(paths: Iterable<Path>): FieldSet {
    const set = new FieldSet();
    for (const p of paths) set.insert(p);
    return set;
  }
  /** Adds `path`; `key` is its elements joined, when the caller has it already. */
  insert(path: Path, key = path.join(SEP)): void {
    this.paths.set(key, path);
    this.#prefixes = undefined;
  }
  has(path: Path): boolean {
    return this.paths.has(path.join(SEP));
  }
  get size(): number {
    return this.paths.size;
  }
  union(other: FieldSet): FieldSet {
    const out = this.#keep(() => true);
    for (const [key, p] of other.paths) out.paths.set(key, p);
    return out;
  }
  difference(other: FieldSet): FieldSet {
    return this.#keep((key) => !other.paths.has(key));
  }
  intersection(other: FieldSet): FieldSet {
    return this.#keep((key) => other.paths.has(key));
  }
  /** The members `keep` accepts; it gets each path with its key (the elements joined by NUL). */
  filter(keep: (p: Path, key: string) => boolean): FieldSet {
    return this.#keep((key, p) => keep(p, key));
  }
  equals(other: FieldSet): boolean {
    return this.size === other.size && [...this.paths.keys()].every((k) => other.paths.has(k));
  }
  /** True when some path of the set lies strictly below `path`. */
  hasBelow(path: Path): boolean {
    if (!this.#prefixes) {
      // Each member's prefixes, once: asking for every member of a large set stays linear.
      const prefixes = new Set<string>();
      for (const p of this.paths.values()) {
        let key = '';
        for (let i = 0; i < p.length - 1; i++) {
          key = i === 0 ? p[0] : key + SEP + p[i];
          prefixes.add(key);
        }
      }
      this.#prefixes = prefixes;
    }
    return this.#prefixes.has(path.join(SEP));
  }
  /** The members `keep` accepts, reusing their keys instead of joining the paths again. */
  #keep(keep: (key: string, path: Path) => boolean): FieldSet {
    const out = new FieldSet();
    for (const [key, p] of this.paths) if (keep(key, p)) out.paths.set(key, p);
    return out;
  }
}

/** FieldsV1 (`{"f:data":{".":{},"f:key":{}}}`) to a set. */
export function decodeFieldsV1(fields: unknown): FieldSet {
  const set = new FieldSet();
  decodeInto(fields, [], '', set);
  return set;
}

function decodeInto(fields: unknown, prefix: string[], prefixKey: string, set: FieldSet): void {
  if (!isObject(fields)) return;
  for (const [pe, value] of Object.entries(fields)) {
    if (pe === '.') {
      set.insert(prefix, prefixKey);
      continue;
    }
    const path = [...prefix, pe];
    const key = childKey(prefix, prefixKey, pe);
    if (isObject(value) && Object.keys(value).length > 0) decodeInto(value, path, key, set);
    else set.insert(path, key);
  }
}

interface FieldsNode {
  member: boolean;
  children: Map<string, FieldsNode>;
}

/** A set to FieldsV1, members sorted as kube writes them (`.` first, then by element). */
export function encodeFieldsV1(set: FieldSet): JsonObject {
  const root: FieldsNode = { member: false, children: new Map() };
  for (const p of set.paths.values()) {
    let node = root;
    for (const pe of p) {
      let next = node.children.get(pe);
      if (!next) {
        next = { member: false, children: new Map() };
        node.children.set(pe, next);
      }
      node = next;
    }
    node.member = true;
  }
  return fieldsObject(root);
}

/** A member with members below is marked by `.`; a member without is an empty object. */
function fieldsObject(node: FieldsNode): JsonObject {
  const out: JsonObject = {};
  if (node.member && node.children.size > 0) out['.'] = {};
  const keys = [...node.children.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Defined, not assigned: an element read from stored FieldsV1 may be `__proto__`.
  for (const key of keys) {
    Object.defineProperty(out, key, {
      value: fieldsObject(node.children.get(key)!),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/** A path as kube prints it in conflicts: `.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`. */
export function pathString(path: Path): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      if (pe.startsWith('f:')) return `.${body}`;
      if (pe.startsWith('k:')) {
        const key = JSON.parse(body) as JsonObject;
        return `[${Object.entries(key)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      if (pe.startsWith('v:')) return `[=${body}]`;
      return `[${body}]`;
    })
    .join('');
}

function sortedJson(value: unknown): string {
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`)
      .join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  return JSON.stringify(value);
}

/** The path element of a list item; undefined for atomic lists. */
function itemElement(schema: ApplySchema, item: unknown, where: Path): string {
  if (schema.listType === 'map') {
    if (!isObject(item)) throw invalid(where, 'associative list with keys has an element that is not a map');
    const keys = [...(schema.listMapKeys ?? [])].sort();
    const key: JsonObject = {};
    for (const k of keys) {
      if (!Object.hasOwn(item, k) || item[k] === null || isObject(item[k]) || Array.isArray(item[k]))
        throw invalid(where, `associative list with keys has an element that omits key field "${k}"`);
      key[k] = item[k];
    }
    return `k:${JSON.stringify(key)}`;
  }
  return `v:${sortedJson(item)}`;
}

function invalid(where: Path, why: string) {
  return newBadRequest(`failed to create typed patch object: ${pathString(where)}: ${why}`);
}

function granular(schema: ApplySchema, value: unknown): 'map' | 'list' | undefined {
  if (isObject(value) && !schema.atomicMap && !schema.listType) return 'map';
  if (Array.isArray(value) && (schema.listType === 'map' || schema.listType === 'set')) return 'list';
  return undefined;
}

/** Indexes a granular list's items by path element; duplicates are refused. */
function indexItems(schema: ApplySchema, list: unknown[], where: Path): Map<string, unknown> {
  const index = new Map<string, unknown>();
  for (const item of list) {
    const pe = itemElement(schema, item, where);
    if (index.has(pe)) throw invalid(where, `duplicate entries for key ${pe.slice(2)}`);
    index.set(pe, item);
  }
  return index;
}

/** The fields an applied configuration sets (SMD ToFieldSet). */
export function toFieldSet(value: unknown, schema: ApplySchema): FieldSet {
  const set = new FieldSet();
  addFields(value, schema, [], '', set);
  return set;
}

function addFields(value: unknown, schema: ApplySchema, prefix: string[], prefixKey: string, set: FieldSet) {
  const kind = granular(schema, value);
  if (kind === 'map') {
    for (const [name, member] of Object.entries(value as JsonObject)) {
      const { schema: s, declared } = child(schema, name);
      const pe = `f:${name}`;
      const path = [...prefix, pe];
      const key = childKey(prefix, prefixKey, pe);
      addFields(member, s, path, key, set);
      if (
        member === null ||
        (isObject(member) && Object.keys(member).length === 0) ||
        !declared ||
        !granular(s, member)
      )
        set.insert(path, key);
    }
  } else if (kind === 'list') {
    const items = schema.items ?? untyped;
    for (const item of value as unknown[]) {
      const pe = itemElement(schema, item, prefix);
      const path = [...prefix, pe];
      const key = childKey(prefix, prefixKey, pe);
      addFields(item, items, path, key, set);
      set.insert(path, key);
    }
  } else if (prefix.length > 0) set.insert(prefix, prefixKey);
}

/** Merges an applied configuration into a live value: maps member by member, granular lists by item. */
export function merge(live: unknown, config: unknown, schema: ApplySchema, where: Path = []): unknown {
  if (live === undefined) return cloneJson(config);
  const kind = granular(schema, config);
  if (kind === 'map' && isObject(live)) {
    const out: JsonObject = { ...live };
    for (const [key, member] of Object.entries(config as JsonObject)) {
      out[key] = merge(Object.hasOwn(live, key) ? live[key] : undefined, member, child(schema, key).schema, [
        ...where,
        `f:${key}`,
      ]);
    }
    return out;
  }
  if (kind === 'list' && Array.isArray(live)) {
    const items = schema.items ?? untyped;
    const liveIndex = indexItems(schema, live, where);
    const configIndex = indexItems(schema, config as unknown[], where);
    // A new item goes after the configuration's previous item; new items the configuration starts with go
    // before the first live item it shares (at the end when it shares none). Collected per anchor, so that
    // the list is built in one pass instead of searching and splicing it for every item.
    const leading: unknown[] = [];
    const runs = new Map<string, unknown[]>();
    let anchor: unknown[] = leading;
    for (const [pe, item] of configIndex) {
      if (liveIndex.has(pe)) {
        anchor = [];
        runs.set(pe, anchor);
      } else anchor.push(cloneJson(item));
    }
    const out: unknown[] = [];
    let leadingPlaced = false;
    for (const [pe, item] of liveIndex) {
      const applied = configIndex.get(pe);
      if (applied === undefined) {
        out.push(item);
        continue;
      }
      if (!leadingPlaced) {
        for (const value of leading) out.push(value);
        leadingPlaced = true;
      }
      out.push(merge(item, applied, items, [...where, pe]));
      for (const value of runs.get(pe)!) out.push(value);
    }
    if (!leadingPlaced) for (const value of leading) out.push(value);
    return out;
  }
  return cloneJson(config);
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changed from `before` to `after` (SMD Compare). */
export function compare(before: unknown, after: unknown, schema: ApplySchema): Comparison {
  const result: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareInto(before, after, schema, [], '', result);
  return result;
}

function compareInto(
  lhs: unknown,
  rhs: unknown,
  schema: ApplySchema,
  path: string[],
  key: string,
  out: Comparison,
): void {
  if (lhs === undefined && rhs === undefined) return;
  const lk = lhs === undefined ? undefined : granular(schema, lhs);
  const rk = rhs === undefined ? undefined : granular(schema, rhs);
  const kind = lk ?? rk;
  if (!kind || (lhs !== undefined && rhs !== undefined && lk !== rk)) {
    if (path.length === 0) return;
    if (lhs === undefined) out.added.insert(path, key);
    else if (rhs === undefined) out.removed.insert(path, key);
    else if (!jsonEqual(lhs, rhs)) out.modified.insert(path, key);
    return;
  }
  if (path.length > 0) {
    if (lhs === undefined) out.added.insert(path, key);
    else if (rhs === undefined) out.removed.insert(path, key);
  }
  if (kind === 'map') {
    const l = (lhs ?? {}) as JsonObject;
    const r = (rhs ?? {}) as JsonObject;
    const names = new Set([...Object.keys(l), ...Object.keys(r)]);
    for (const name of names) {
      const pe = `f:${name}`;
      compareInto(
        Object.hasOwn(l, name) ? l[name] : undefined,
        Object.hasOwn(r, name) ? r[name] : undefined,
        child(schema, name).schema,
        [...path, pe],
        childKey(path, key, pe),
        out,
      );
    }
    return;
  }
  const items = schema.items ?? untyped;
  const l = indexItems(schema, (lhs ?? []) as unknown[], path);
  const r = indexItems(schema, (rhs ?? []) as unknown[], path);
  for (const pe of new Set([...l.keys(), ...r.keys()]))
    compareInto(l.get(pe), r.get(pe), items, [...path, pe], childKey(path, key, pe), out);
}

interface RemovalNode {
  /** The path ends here: the value goes. */
  remove: boolean;
  children: Map<string, RemovalNode>;
}

/**
 * Removes the values at `paths` from `obj` (mutated); missing paths are ignored. A list or map that this
 * leaves empty is removed too (below the top level) when `dropEmpty` agrees for its path. All paths are
 * removed in one walk of the object, so that removing every item of a long list stays linear.
 */
export function removePaths(
  obj: unknown,
  paths: Iterable<Path>,
  schema: ApplySchema,
  dropEmpty: (path: Path) => boolean = () => false,
): void {
  const root: RemovalNode = { remove: false, children: new Map() };
  for (const path of paths) {
    let node = root;
    for (const pe of path) {
      let next = node.children.get(pe);
      if (!next) {
        next = { remove: false, children: new Map() };
        node.children.set(pe, next);
      }
      node = next;
    }
    node.remove = true;
  }
  removeBelow(obj, root, schema, [], dropEmpty);
}

/**
 * Removes what `node` marks below `value` (the value at `path`). A member left empty goes when it lies at
 * depth 2 or more and `dropEmpty` agrees, before its parent is looked at.
 */
function removeBelow(
  value: unknown,
  node: RemovalNode,
  schema: ApplySchema,
  path: string[],
  dropEmpty: (path: Path) => boolean,
): void {
  const emptied = (member: unknown, memberPath: Path, memberNode: RemovalNode) =>
    memberNode.children.size > 0 && memberPath.length >= 2 && isEmpty(member) && dropEmpty(memberPath);
  if (isObject(value)) {
    for (const [pe, below] of node.children) {
      if (!pe.startsWith('f:')) continue;
      const key = pe.slice(2);
      if (!Object.hasOwn(value, key)) continue;
      if (below.remove) {
        delete value[key];
        continue;
      }
      const memberPath = [...path, pe];
      removeBelow(value[key], below, child(schema, key).schema, memberPath, dropEmpty);
      if (emptied(value[key], memberPath, below)) delete value[key];
    }
  } else if (Array.isArray(value)) {
    const items = schema.items ?? untyped;
    // The first item for each path element, as a search from the start would find it.
    const indexOf = new Map<string, number>();
    value.forEach((item, i) => {
      let pe: string;
      try {
        pe = itemElement(schema, item, path);
      } catch {
        return;
      }
      if (!indexOf.has(pe)) indexOf.set(pe, i);
    });
    const dropped = new Set<number>();
    for (const [pe, below] of node.children) {
      const i = indexOf.get(pe);
      if (i === undefined) continue;
      if (below.remove) {
        dropped.add(i);
        continue;
      }
      const memberPath = [...path, pe];
      removeBelow(value[i], below, items, memberPath, dropEmpty);
      if (emptied(value[i], memberPath, below)) dropped.add(i);
    }
    if (dropped.size > 0) {
      let kept = 0;
      for (let i = 0; i < value.length; i++) if (!dropped.has(i)) value[kept++] = value[i];
      value.length = kept;
    }
  }
}

function isEmpty(value: unknown): boolean {
  return Array.isArray(value) ? value.length === 0 : isObject(value) && Object.keys(value).length === 0;
}
