/** Events (core/v1), with the validation of kube-apiserver's core Event. */

import type { FieldError } from '@certkit/apimachinery';
import { humanAge, nameColumn } from '../printing.ts';
import { builtin } from './builtin.ts';

/**
 * The SOURCE column: the legacy source, else the reporting controller and instance (what events.k8s.io/v1
 * writers set), joined as kubectl has always shown them, `component, host`.
 */
function eventSource(obj: Record<string, unknown>): string {
  const source = (obj.source as { component?: string; host?: string } | undefined) ?? {};
  const component = source.component || String(obj.reportingComponent ?? '');
  const instance = source.host || String(obj.reportingInstance ?? '');
  return instance ? `${component}, ${instance}` : component;
}

export const events = builtin({
  resource: 'events',
  model: 'CoreV1Event',
  singular: 'event',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  selectableFields: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  columns: [
    { name: 'Last Seen', type: 'string', description: 'Time since the event was last seen.' },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning).' },
    { name: 'Reason', type: 'string', description: 'Short, machine understandable reason of the event.' },
    { name: 'Object', type: 'string', description: 'The object this event is about.' },
    // -o wide, as kube-apiserver's event printer: where in the object, and who reported it.
    { name: 'Subobject', type: 'string', priority: 1, description: 'The field of the object it is about.' },
    { name: 'Source', type: 'string', priority: 1, description: 'The component reporting this event.' },
    {
      name: 'Message',
      type: 'string',
      description: 'A human-readable description of the status of this operation.',
    },
    { name: 'First Seen', type: 'string', priority: 1, description: 'Time since the event was first seen.' },
    {
      name: 'Count',
      type: 'string',
      priority: 1,
      description: 'The number of times this event has occurred.',
    },
    { ...nameColumn, priority: 1 },
  ],
  cells(obj, now) {
    const involved = (obj.involvedObject as Record<string, string>) ?? {};
    const first =
      (obj.firstTimestamp as string) || (obj.eventTime as string) || obj.metadata.creationTimestamp;
    const last = (obj.lastTimestamp as string) || first;
    return [
      humanAge(last, now),
      obj.type ?? '',
      obj.reason ?? '',
      involved.name
        ? `${String(involved.kind ?? '').toLowerCase()}/${involved.name}`
        : String(involved.kind ?? '').toLowerCase(),
      involved.fieldPath ?? '',
      eventSource(obj),
      String(obj.message ?? '').trim(),
      humanAge(first, now),
      // Events of the events.k8s.io API that are not a series carry no count: one occurrence.
      Number(obj.count) || 1,
      obj.metadata.name,
    ];
  },
  fieldValues(obj) {
    const involved = (obj.involvedObject as Record<string, string>) ?? {};
    const source = (obj.source as { component?: string }) ?? {};
    return {
      'involvedObject.kind': involved.kind ?? '',
      'involvedObject.namespace': involved.namespace ?? '',
      'involvedObject.name': involved.name ?? '',
      'involvedObject.uid': involved.uid ?? '',
      'involvedObject.apiVersion': involved.apiVersion ?? '',
      'involvedObject.resourceVersion': involved.resourceVersion ?? '',
      'involvedObject.fieldPath': involved.fieldPath ?? '',
      reason: String(obj.reason ?? ''),
      reportingComponent: String(obj.reportingComponent ?? ''),
      source: source.component ?? '',
      type: String(obj.type ?? ''),
    };
  },
  validate(obj) {
    const errs: FieldError[] = [];
    const involved = obj.involvedObject as Record<string, string> | undefined;
    if (!involved) errs.push({ type: 'FieldValueRequired', field: 'involvedObject' });
    else if (involved.namespace && involved.namespace !== obj.metadata.namespace) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'involvedObject.namespace',
        value: involved.namespace,
        detail: 'does not match event.namespace',
      });
    }
    if (obj.type && obj.type !== 'Normal' && obj.type !== 'Warning') {
      errs.push({
        type: 'FieldValueNotSupported',
        field: 'type',
        value: obj.type,
        detail: 'supported values: "Normal", "Warning"',
      });
    }
    return errs;
  },
});
