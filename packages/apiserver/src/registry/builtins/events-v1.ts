/**
 * Events of events.k8s.io/v1: the core/v1 Events (events.ts) in the newer API's form, read and written through
 * the same stored objects, as kube-apiserver serves them (the events.k8s.io REST storage is core's Event
 * storage, its resource cohabiting with core's), with its printer, its field selectors (named in this API's
 * terms) and the strict validation kube-apiserver gives creates and updates made through this API.
 */

import {
  type FieldError,
  invalid,
  jsonEqual,
  qualifiedNameErrors,
  required,
  type StoredObject,
  appendErrors,
} from '@certkit/apimachinery';
import { ConvertedStorage } from '../converted-storage.ts';
import { resourcePrefix } from '../resource.ts';
import { builtin } from './builtin.ts';
import { coreEventToEventsV1, eventsV1ToCoreEvent } from './event-conversion.ts';
import { events } from './events.ts';

type Json = Record<string, unknown>;

/** kube's length limits of an Event's strings (pkg/apis/core/validation/events.go). */
const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

function asCore(obj: StoredObject): Json {
  return eventsV1ToCoreEvent(obj as unknown as Json);
}

/**
 * The checks every Event passes whatever API wrote it, for an Event that has an eventTime (the newer shape):
 * kube's legacy Event validation, which reports the internal (core) field names, as here.
 */
function validateReported(core: Json, namespace: string): FieldError[] {
  const errs: FieldError[] = [];
  const involved = (core.involvedObject as Json) ?? {};
  if (!involved.namespace && namespace !== 'default' && namespace !== 'kube-system') {
    errs.push(
      invalid('involvedObject.namespace', involved.namespace ?? '', 'does not match event.namespace'),
    );
  }
  const controller = String(core.reportingComponent ?? '');
  if (!controller) errs.push(required('reportingController'));
  for (const msg of qualifiedNameErrors(controller))
    errs.push(invalid('reportingController', controller, msg));
  const bounded: [string, string, number][] = [
    ['reportingInstance', String(core.reportingInstance ?? ''), REPORTING_INSTANCE_LIMIT],
    ['action', String(core.action ?? ''), ACTION_LIMIT],
    ['reason', String(core.reason ?? ''), REASON_LIMIT],
  ];
  for (const [field, value, limit] of bounded) {
    if (!value) errs.push(required(field));
    if (value.length > limit) errs.push(invalid(field, '', `can have at most ${limit} characters`));
  }
  if (String(core.message ?? '').length > NOTE_LIMIT) {
    errs.push(invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  }
  return errs;
}

/** A series, when there is one, counts at least two occurrences and says when the last was. */
function validateSeries(core: Json): FieldError[] {
  const series = core.series as Json | undefined | null;
  if (!series) return [];
  const errs: FieldError[] = [];
  if (!(Number(series.count ?? 0) >= 2)) errs.push(invalid('series.count', '', 'should be at least 2'));
  if (!series.lastObservedTime) errs.push(required('series.lastObservedTime'));
  return errs;
}

/** Create through events.k8s.io/v1: the newer shape only, none of the deprecated fields set. */
function validateCreate(core: Json, namespace: string): FieldError[] {
  const errs: FieldError[] = [];
  if (core.eventTime) appendErrors(errs, validateReported(core, namespace));
  else {
    // kube's legacy rule for an Event without eventTime: involvedObject's namespace is the Event's.
    const involved = (core.involvedObject as Json) ?? {};
    const ns = String(involved.namespace ?? '');
    if (ns ? ns !== namespace : namespace !== '' && namespace !== 'default') {
      errs.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
    }
  }
  appendErrors(errs, validateSeries(core));
  if (!core.eventTime) errs.push(required('eventTime'));
  if (core.type !== 'Normal' && core.type !== 'Warning') {
    errs.push(invalid('type', '', `has invalid value: ${String(core.type ?? '')}`));
  }
  if (core.firstTimestamp) errs.push(invalid('firstTimestamp', '', 'needs to be unset'));
  if (core.lastTimestamp) errs.push(invalid('lastTimestamp', '', 'needs to be unset'));
  if (core.count) errs.push(invalid('count', '', 'needs to be unset'));
  const source = (core.source as Json) ?? {};
  if (source.component || source.host) errs.push(invalid('source', '', 'needs to be unset'));
  return errs;
}

/** The fields an update through events.k8s.io/v1 may not change: all but the series and metadata. */
const IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

/** The name kube reports an immutable field by: the internal field, as JSON names it, but reportingController. */
function reportedName(field: string): string {
  return field === 'reportingComponent' ? 'reportingController' : field;
}

function validateUpdate(core: Json, old: Json, namespace: string): FieldError[] {
  const errs: FieldError[] = core.eventTime ? validateReported(core, namespace) : [];
  if (!jsonEqual(core.series ?? null, old.series ?? null)) appendErrors(errs, validateSeries(core));
  for (const field of IMMUTABLE) {
    if (!jsonEqual(core[field] ?? null, old[field] ?? null)) {
      errs.push(invalid(reportedName(field), core[field] ?? '', 'field is immutable'));
    }
  }
  return errs;
}

export const eventsV1 = builtin({
  group: 'events.k8s.io',
  resource: 'events',
  model: 'EventsV1Event',
  singular: 'event',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  // Named as this API names them; each is a field of the core Event (kube's field label conversion).
  selectableFields: [
    'regarding.kind',
    'regarding.namespace',
    'regarding.name',
    'regarding.uid',
    'regarding.apiVersion',
    'regarding.resourceVersion',
    'regarding.fieldPath',
    'reason',
    'reportingController',
    'source',
    'type',
  ],
  columns: events.columns,
  // kube prints both with its one Event printer, of the internal (core) Event.
  cells: (obj, now) => events.cells(asCore(obj) as unknown as StoredObject, now),
  fieldValues(obj) {
    const regarding = (obj.regarding as Record<string, string>) ?? {};
    const source = (obj.deprecatedSource as { component?: string }) ?? {};
    return {
      'regarding.kind': regarding.kind ?? '',
      'regarding.namespace': regarding.namespace ?? '',
      'regarding.name': regarding.name ?? '',
      'regarding.uid': regarding.uid ?? '',
      'regarding.apiVersion': regarding.apiVersion ?? '',
      'regarding.resourceVersion': regarding.resourceVersion ?? '',
      'regarding.fieldPath': regarding.fieldPath ?? '',
      reason: String(obj.reason ?? ''),
      reportingController: String(obj.reportingController ?? ''),
      source: source.component ?? '',
      type: String(obj.type ?? ''),
    };
  },
  validate(obj, old) {
    const namespace = obj.metadata.namespace ?? '';
    return old ? validateUpdate(asCore(obj), asCore(old), namespace) : validateCreate(asCore(obj), namespace);
  },
  storedAs(storage) {
    return new ConvertedStorage(
      storage,
      resourcePrefix({ group: 'events.k8s.io', resource: 'events' }),
      resourcePrefix(events),
      {
        read: (stored) => JSON.stringify(coreEventToEventsV1(JSON.parse(stored) as Json)),
        write: (value) => JSON.stringify(eventsV1ToCoreEvent(JSON.parse(value) as Json)),
      },
    );
  },
});
