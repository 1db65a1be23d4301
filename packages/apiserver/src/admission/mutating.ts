/**
 * The mutating pass (kube-apiserver's mutating dispatcher): webhooks one at a time in index order, each
 * seeing the object as the webhooks before it left it; their JSON patches applied to the object in place.
 * A webhook with reinvocationPolicy IfNeeded is called once more, after the pass, when a webhook after it
 * changed the object.
 */

import { isObject, jsonEqual, newInternalError, type StoredObject } from '@certkit/apimachinery';
import { applyJsonPatch } from '../patch/json-patch.ts';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { AdmissionAttributes } from './attributes.ts';
import { callWebhook, type DispatchContext, webhookApplies } from './dispatch.ts';
import type { IndexedWebhook } from './webhook-index.ts';

/** Replaces the members of target with those of source (the object is held by reference by the caller). */
function replaceContents(target: StoredObject, source: StoredObject): void {
  for (const key of Object.keys(target)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, source);
}

/** Calls one webhook and applies its patch; true when the object changed. */
async function mutateOnce(
  entry: IndexedWebhook,
  version: string,
  def: ResourceDefinition,
  attrs: AdmissionAttributes,
  context: DispatchContext,
): Promise<boolean> {
  const result = await callWebhook(entry.hook, def, attrs, version, true, context);
  const patch = result?.patch;
  if (!Array.isArray(patch) || patch.length === 0) return false;
  const name = entry.hook.name ?? '';
  const obj = attrs.object;
  if (!obj) {
    throw newInternalError(
      `admission webhook "${name}" attempted to modify the object, which is not supported for this operation`,
    );
  }
  const storedApiVersion = obj.apiVersion;
  const sent = { ...obj, apiVersion: def.group ? `${def.group}/${version}` : version };
  let patched: unknown;
  try {
    patched = applyJsonPatch(sent, patch);
  } catch (err) {
    throw newInternalError(
      `admission webhook "${name}" returned a patch that cannot be applied: ${(err as Error).message}`,
    );
  }
  if (!isObject(patched) || !isObject((patched as StoredObject).metadata))
    throw newInternalError(`admission webhook "${name}" returned a patch that does not leave an object`);
  const next = { ...(patched as StoredObject), apiVersion: storedApiVersion };
  if (jsonEqual(next, obj)) return false;
  replaceContents(obj, next);
  return true;
}

export async function runMutatingWebhooks(
  hooks: IndexedWebhook[],
  def: ResourceDefinition,
  attrs: AdmissionAttributes,
  context: DispatchContext,
): Promise<boolean> {
  let changed = false;
  const invokedReinvocable: { entry: IndexedWebhook; version: string }[] = [];
  const reinvoke = new Set<string>();
  for (const entry of hooks) {
    const version = await webhookApplies(entry.hook, def, attrs, context);
    if (version === undefined) continue;
    if (await mutateOnce(entry, version, def, attrs, context)) {
      changed = true;
      // Every reinvocable webhook called before this one saw the object before this change.
      for (const earlier of invokedReinvocable) reinvoke.add(earlier.entry.key);
    }
    if (entry.hook.reinvocationPolicy === 'IfNeeded') invokedReinvocable.push({ entry, version });
  }
  for (const { entry, version } of invokedReinvocable) {
    if (!reinvoke.has(entry.key)) continue;
    if (await mutateOnce(entry, version, def, attrs, context)) changed = true;
  }
  return changed;
}
