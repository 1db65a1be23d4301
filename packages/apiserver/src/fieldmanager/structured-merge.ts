/**
 * Server-side apply's merge, the structured-merge-diff (sigs.k8s.io/structured-merge-diff) subset the server
 * implements: merging an applied configuration into a live object, comparing two objects and removing fields.
 * Lists follow their schema (`x-kubernetes-list-type` map / set / atomic, apply-schema.ts); maps merge
 * member by member unless `x-kubernetes-map-type: atomic`. Paths and field sets: field-set.ts.
 */

import { cloneJson, isObject, jsonEqual, type JsonObject } from '@certkit/apimachinery';
import { type ApplySchema, child, untyped } from './apply-schema.ts';
import { FieldSet, type Path, childKey, granular, indexItems, itemElement } from './field-set.ts';

/**
 * Merges an applied configuration into a live value: maps member by member, granular lists by item.
 *
 * The recursion goes through this small function and the map or list merge, each with few locals: as one
 * function with both branches' locals, a frame per level of nesting took the call stack past its size
 * before the 2000 levels a body may nest (ADR 0401): a 500 for an apply to a custom resource nested 1990
 * deep, on a server that had not run the merge enough for it to be compiled yet.
 */
export function merge(live: unknown, config: unknown, schema: ApplySchema, where: Path = []): unknown {
  if (live === undefined) return cloneJson(config);
  const kind = granular(schema, config);
  if (kind === 'map' && isObject(live)) return mergeMap(live, config as JsonObject, schema, where);
  if (kind === 'list' && Array.isArray(live)) return mergeList(live, config as unknown[], schema, where);
  return cloneJson(config);
}

function mergeMap(live: JsonObject, config: JsonObject, schema: ApplySchema, where: Path): JsonObject {
  const out: JsonObject = { ...live };
  for (const key of Object.keys(config)) {
    out[key] = merge(
      Object.hasOwn(live, key) ? live[key] : undefined,
      config[key],
      child(schema, key).schema,
      [...where, `f:${key}`],
    );
  }
  return out;
}

function mergeList(live: unknown[], config: unknown[], schema: ApplySchema, where: Path): unknown[] {
  const items = schema.items ?? untyped;
  const liveIndex = indexItems(schema, live, where);
  const configIndex = indexItems(schema, config, where);
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
