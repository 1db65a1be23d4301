/**
 * Field sets (structured-merge-diff's fieldpath.Set) and their FieldsV1 encoding in managedFields. Paths are
 * arrays of path elements in kube's FieldsV1 spelling: `f:<field>`, `k:{"key":"value"}` (keys sorted by
 * name), `v:<json>` for set items; a set is keyed by the joined path, so union and difference are linear.
 */

import { isObject, type JsonObject, newBadRequest } from '@certkit/apimachinery';
import { type ApplySchema, child, untyped } from './apply-schema.ts';

export type Path = readonly string[];
const SEP = '\u0000';

/**
 * The key of `path` followed by `pe`, from the key of `path` (its elements joined): built element by element
 * as a walk descends, so that no path is joined from scratch (joining was most of an apply's time).
 */
export function childKey(path: Path, key: string, pe: string): string {
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
export function itemElement(schema: ApplySchema, item: unknown, where: Path): string {
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

export function granular(schema: ApplySchema, value: unknown): 'map' | 'list' | undefined {
  if (isObject(value) && !schema.atomicMap && !schema.listType) return 'map';
  if (Array.isArray(value) && (schema.listType === 'map' || schema.listType === 'set')) return 'list';
  return undefined;
}

/** Indexes a granular list's items by path element; duplicates are refused. */
export function indexItems(schema: ApplySchema, list: unknown[], where: Path): Map<string, unknown> {
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
