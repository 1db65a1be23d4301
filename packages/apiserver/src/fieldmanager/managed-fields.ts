/**
 * metadata.managedFields bookkeeping for server-side apply, as kube-apiserver's fieldmanager does it:
 * one entry per manager and operation (Apply entries keyed without apiVersion), Update ownership moving to
 * the writer, conflicts for an Apply that changes fields another manager owns (unless forced), and
 * `before-first-apply` owning what an object without managedFields held when it is first applied.
 */

import {
  formatTime,
  isObject,
  jsonEqual,
  type JsonObject,
  newStatusError,
  StatusError,
  type StoredObject,
} from '@certkit/apimachinery';
import { objectMetaSmp } from '../patch/strategic-merge-patch.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import { type ApplySchema, schemaFromSmp } from './apply-schema.ts';
import { compare, merge, removePaths } from './structured-merge.ts';
import { decodeFieldsV1, encodeFieldsV1, FieldSet, type Path, pathString, toFieldSet } from './field-set.ts';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: JsonObject;
  subresource?: string;
}

interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

/** Where a write happens: the field manager, the version it writes, the subresource. */
export interface FieldManagerInfo {
  manager: string;
  apiVersion: string;
  subresource?: string;
  /** The status subresource exists: the main resource's writes do not own status, and vice versa. */
  statusSubresource: boolean;
  schema: ApplySchema;
}

export const BEFORE_FIRST_APPLY = 'before-first-apply';

/** kube-apiserver's manager identifier: everything but fields and time; Apply without apiVersion. */
function keyOf(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    manager: m.manager,
    operation: m.operation,
    ...(m.operation === 'Update' ? { apiVersion: m.apiVersion } : {}),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  });
}

function decode(entries: unknown): Map<string, Manager> {
  const managers = new Map<string, Manager>();
  if (!Array.isArray(entries)) return managers;
  for (const e of entries as ManagedFieldsEntry[]) {
    if (e === null || typeof e !== 'object') continue;
    const m: Manager = {
      manager: e.manager ?? '',
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: e.apiVersion ?? '',
      set: decodeFieldsV1(e.fieldsV1),
    };
    if (e.subresource) m.subresource = e.subresource;
    if (e.time) m.time = e.time;
    managers.set(keyOf(m), m);
  }
  return managers;
}

/** Entries in kube's order: operation, time, manager, apiVersion, subresource. */
function encode(managers: Map<string, Manager>): ManagedFieldsEntry[] {
  const list = [...managers.values()].filter((m) => m.set.size > 0);
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  list.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
  return list.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time ? { time: m.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: encodeFieldsV1(m.set),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  }));
}

const STRIPPED = new Set(
  [
    ['f:apiVersion'],
    ['f:kind'],
    ['f:metadata'],
    ...[
      'name',
      'namespace',
      'creationTimestamp',
      'selfLink',
      'uid',
      'generation',
      'managedFields',
      'resourceVersion',
    ].map((f) => ['f:metadata', `f:${f}`]),
  ].map((p) => p.join('\u0000')),
);

/** Drops system fields (kube's StripMetaManager) and the fields the subresource does not write. */
function strip(set: FieldSet, info: FieldManagerInfo): FieldSet {
  return set.filter((p, key) => {
    if (STRIPPED.has(key)) return false;
    if (p[0] === 'f:metadata' && p[1] === 'f:managedFields') return false;
    if (!info.statusSubresource) return true;
    return info.subresource === 'status' ? p[0] === 'f:status' : p[0] !== 'f:status';
  });
}

/** The object without its managedFields (what fields are computed on). */
function bare(obj: StoredObject | JsonObject | undefined): JsonObject {
  if (!obj) return {};
  const o = obj as JsonObject;
  const meta = isObject(o.metadata) ? { ...o.metadata } : undefined;
  if (!meta) return o;
  delete meta.managedFields;
  return { ...o, metadata: meta };
}

/**
 * SMD's update of the other managers for a change from live to next: fields changed or added leave every
 * other owner (they are conflicts unless forced), removed fields leave every owner.
 */
function updateOthers(
  managers: Map<string, Manager>,
  self: string,
  changed: FieldSet,
  removed: FieldSet,
  force: boolean,
): { manager: Manager; path: Path }[] {
  const conflicts: { manager: Manager; path: Path }[] = [];
  for (const [key, m] of managers) {
    if (key === self) continue;
    const taken = m.set.intersection(changed);
    for (const path of taken.paths.values()) conflicts.push({ manager: m, path });
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);
  for (const [key, m] of managers) {
    if (key === self) continue;
    m.set = m.set.difference(changed).difference(removed);
    if (m.set.size === 0) managers.delete(key);
  }
  return conflicts;
}

/**
 * managedFields after an ordinary write (create, update, patch) of an object that carries them: the
 * fields the write changed or added move to the writer's Update entry; fields it removed leave every owner.
 * The entry's time changes only when the write took fields.
 */
export function updateManagedFields(
  live: StoredObject | undefined,
  next: StoredObject,
  entries: unknown,
  info: FieldManagerInfo,
): ManagedFieldsEntry[] {
  const managers = decode(entries);
  const cmp = compare(bare(live), bare(next), info.schema);
  const changed = strip(cmp.modified.union(cmp.added), info);
  const removed = strip(cmp.removed, info);
  updateOthers(managers, '', changed, removed, true);
  if (changed.size > 0) {
    const m: Manager = {
      manager: info.manager,
      operation: 'Update',
      apiVersion: info.apiVersion,
      ...(info.subresource ? { subresource: info.subresource } : {}),
      set: changed,
    };
    const key = keyOf(m);
    const previous = managers.get(key);
    if (previous) m.set = previous.set.difference(removed).union(changed);
    m.time = formatTime(new Date());
    managers.delete(key);
    managers.set(key, m);
  }
  return encode(managers);
}

/**
 * Applies a configuration to the live object (undefined when it does not exist yet). Returns the new
 * object, carrying its managedFields. Throws 409 on conflicts unless forced.
 */
export function applyConfiguration(
  live: StoredObject | undefined,
  config: JsonObject,
  info: FieldManagerInfo,
  force: boolean,
): JsonObject {
  const liveBare = bare(live);
  let managers = decode(live?.metadata.managedFields);
  if (live && managers.size === 0) {
    // Fields of an object never applied (nor tracked) belong to `before-first-apply` (kube's skipNonApplied).
    const before: FieldManagerInfo = { ...info, manager: BEFORE_FIRST_APPLY, subresource: undefined };
    managers = decode(updateManagedFields(undefined, live, [], { ...before, statusSubresource: false }));
    for (const m of managers.values()) {
      m.apiVersion = (live.apiVersion as string | undefined) ?? info.apiVersion;
      m.set = strip(m.set, { ...info, statusSubresource: false });
    }
  }
  const self: Manager = {
    manager: info.manager,
    operation: 'Apply',
    apiVersion: info.apiVersion,
    ...(info.subresource ? { subresource: info.subresource } : {}),
    set: strip(toFieldSet(config, info.schema), info),
  };
  const key = keyOf(self);
  const last = managers.get(key);
  const merged = merge(live ? liveBare : undefined, config, info.schema) as JsonObject;
  managers.set(key, self);

  // Fields applied last time and not now go, unless someone (this apply included) still owns them.
  if (last) {
    let owned = new FieldSet();
    for (const m of managers.values()) owned = owned.union(m.set);
    const gone = [...last.set.difference(self.set).paths.values()].filter(
      (p) => !owned.has(p) && !owned.hasBelow(p),
    );
    // A list or map left empty goes too, unless it is a field someone owns.
    removePaths(merged, gone, info.schema, (parent) => !owned.has(parent));
  }

  const cmp = compare(liveBare, merged, info.schema);
  const changed = strip(cmp.modified.union(cmp.added), info);
  updateOthers(managers, key, changed, strip(cmp.removed, info), force);
  self.time = !live || !jsonEqual(liveBare, merged) || !last ? formatTime(new Date()) : last.time;
  if (isObject(merged.metadata)) {
    const meta = merged.metadata as JsonObject;
    delete meta.managedFields;
    meta.managedFields = encode(managers);
  }
  return merged;
}

function printManager(m: Manager): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion}`;
  return s;
}

/**
 * Conflicts a 409 names, in its message and its causes. kube-apiserver lists them all; an apply that takes
 * over a ConfigMap of 20,000 keys would get a 2.4 MB answer, so the rest are counted instead.
 */
export const MAX_LISTED_CONFLICTS = 100;

/** kube-apiserver's 409 for apply conflicts (fieldmanager NewConflictError), naming at most 100 of them. */
export function conflictError(conflicts: { manager: Manager; path: Path }[]): StatusError {
  // Sort keys computed once per conflict: the comparator runs n log n times.
  const sorted = conflicts
    .map((c) => ({ ...c, key: keyOf(c.manager), field: pathString(c.path) }))
    .sort((a, b) => {
      if (a.key !== b.key) return a.key < b.key ? -1 : 1;
      return a.field < b.field ? -1 : a.field > b.field ? 1 : 0;
    });
  const listed = sorted.slice(0, MAX_LISTED_CONFLICTS);
  let message: string;
  if (sorted.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(sorted[0].manager)}: ${sorted[0].field}`;
  } else {
    const lines: string[] = [];
    let previous = '';
    for (const c of listed) {
      if (c.key !== previous) lines.push(`conflicts with ${printManager(c.manager)}:`);
      previous = c.key;
      lines.push(`- ${c.field}`);
    }
    const unlisted = sorted.length - listed.length;
    if (unlisted > 0) lines.push(`and ${unlisted} more conflicts, not listed`);
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  return newStatusError(409, 'Conflict', message, {
    causes: listed.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${printManager(c.manager)}`,
      field: c.field,
    })),
  });
}

/** The manager of a write without `fieldManager`: the User-Agent up to its first `/` (kube's prefixFromUserAgent). */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const head = (userAgent ?? '').split('/')[0];
  if (/^[\x20-\x7e]{0,128}$/.test(head)) return head;
  let out = '';
  for (const ch of head) {
    if (/\p{C}/u.test(ch)) continue;
    if (out.length >= 128) break;
    out += ch;
  }
  return out;
}

const builtinSchemas = new WeakMap<ResourceDefinition, ApplySchema>();

/** The apply schema of a resource at a version: its CRD schema, or a built-in's merge keys. */
export function applySchemaFor(def: ResourceDefinition, version: string): ApplySchema {
  if (def.applySchema) return def.applySchema(version);
  let schema = builtinSchemas.get(def);
  if (!schema) {
    schema = schemaFromSmp(def.strategicMerge ?? objectMetaSmp);
    builtinSchemas.set(def, schema);
  }
  return schema;
}
