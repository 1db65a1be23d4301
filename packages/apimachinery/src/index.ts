/**
 * The object model a Kubernetes API server and its clients share, with the semantics of Go's
 * `k8s.io/apimachinery`: object metadata, label and field selectors, list options, continue tokens, `Status`
 * errors and their predicates (`isNotFound`, `isConflict`, …), Go durations and timestamps, and the Prometheus
 * metrics registry every certkit package uses.
 *
 * @packageDocumentation
 * @module @certkit/apimachinery
 */
export * from './continue.ts';
export * from './duration.ts';
export * from './field-errors.ts';
export * from './fields.ts';
export * from './go-format.ts';
export * from './json.ts';
export * from './labels.ts';
export * from './listoptions.ts';
export * from './metrics.ts';
export * from './meta.ts';
export * from './query-bool.ts';
export * from './status.ts';
export * from './time.ts';
export * from './validation.ts';
