export {
  AGGREGATE_INTERVAL_MS,
  AGGREGATE_MAX_EVENTS,
  COMBINED_PREFIX,
  type CoreEvent,
  type CorrelateResult,
  type EventClock,
  EventCorrelator,
  MAX_CACHE_ENTRIES,
  SPAM_BURST,
  SPAM_QPS,
  wallClock,
} from './correlator.ts';
export {
  type EventRecorderOptions,
  EventRecorder,
  type EventSource,
  MAX_QUEUED_EVENTS,
  MAX_TRIES_PER_EVENT,
  RETRY_DELAY_MS,
} from './recorder.ts';
export type { ObjectReference } from './types.ts';
