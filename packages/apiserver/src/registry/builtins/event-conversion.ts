/**
 * core/v1 Event ↔ events.k8s.io/v1 Event, field by field as kube-apiserver converts them through its internal
 * Event (pkg/apis/events/v1 conversion): message ↔ note, involvedObject ↔ regarding, reportingComponent ↔
 * reportingController, source ↔ deprecatedSource, firstTimestamp/lastTimestamp/count ↔ their deprecated*
 * twins; the rest keeps its name. Both APIs read and write the same stored Events (core/v1 here).
 *
 * Each side is written in its Go type's field order, with the members Go's encoder writes even when empty:
 * structs (`regarding: {}`, `deprecatedSource: {}`), zero times as `null` and the strings without omitempty
 * (core's `reportingComponent`, `reportingInstance`), so that an object reads as it would from a cluster.
 */

type Json = Record<string, unknown>;

/** What a field holds, or Go's zero value written for it. */
function or<T>(value: unknown, zero: T): unknown {
  return value === undefined ? zero : value;
}

/** Copies the members that are set, in order, leaving out what Go omits when empty. */
function present(into: Json, entries: [string, unknown][]): void {
  for (const [key, value] of entries) if (value !== undefined) into[key] = value;
}

/** A stored core/v1 Event as events.k8s.io/v1 serves it. */
export function coreEventToEventsV1(core: Json, apiVersion = 'events.k8s.io/v1'): Json {
  const out: Json = { apiVersion, kind: 'Event', metadata: core.metadata };
  out.eventTime = or(core.eventTime, null);
  present(out, [
    ['series', core.series],
    ['reportingController', core.reportingComponent || undefined],
    ['reportingInstance', core.reportingInstance || undefined],
    ['action', core.action],
    ['reason', core.reason],
  ]);
  out.regarding = or(core.involvedObject, {});
  present(out, [
    ['related', core.related],
    ['note', core.message],
    ['type', core.type],
  ]);
  out.deprecatedSource = or(core.source, {});
  out.deprecatedFirstTimestamp = or(core.firstTimestamp, null);
  out.deprecatedLastTimestamp = or(core.lastTimestamp, null);
  present(out, [['deprecatedCount', core.count || undefined]]);
  return out;
}

/** An events.k8s.io/v1 Event as core/v1 stores and serves it. */
export function eventsV1ToCoreEvent(event: Json): Json {
  const out: Json = { apiVersion: 'v1', kind: 'Event', metadata: event.metadata };
  out.involvedObject = or(event.regarding, {});
  present(out, [
    ['reason', event.reason],
    ['message', event.note],
  ]);
  out.source = or(event.deprecatedSource, {});
  out.firstTimestamp = or(event.deprecatedFirstTimestamp, null);
  out.lastTimestamp = or(event.deprecatedLastTimestamp, null);
  present(out, [
    ['count', event.deprecatedCount || undefined],
    ['type', event.type],
  ]);
  out.eventTime = or(event.eventTime, null);
  present(out, [
    ['series', event.series],
    ['action', event.action],
    ['related', event.related],
  ]);
  out.reportingComponent = or(event.reportingController, '');
  out.reportingInstance = or(event.reportingInstance, '');
  return out;
}
