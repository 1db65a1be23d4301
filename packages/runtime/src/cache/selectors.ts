import {
  type FieldSelector,
  fieldSelectorOf,
  type LabelSelector,
  parseFieldSelector,
  parseLabelSelector,
} from '@certkit/apimachinery';

/** Selectors may be given as text (`app=x,tier!=db`) or as parsed selectors. */
export type LabelSelectorInput = string | LabelSelector;
/** A field selector as text (`metadata.name=x`) or as a parsed selector. */
export type FieldSelectorInput = string | FieldSelector;

/** Parses a label selector given as text; a parsed one is returned as is. */
export function toLabelSelector(input: LabelSelectorInput | undefined): LabelSelector | undefined {
  if (input === undefined) return undefined;
  return typeof input === 'string' ? parseLabelSelector(input) : input;
}

/** Parses a field selector given as text; a parsed one is returned as is. */
export function toFieldSelector(input: FieldSelectorInput | undefined): FieldSelector | undefined {
  if (input === undefined) return undefined;
  return typeof input === 'string' ? parseFieldSelector(input) : input;
}

/**
 * fields.AndSelectors: the terms of all selectors, in the given order (not re-sorted, so the string form
 * is upstream's: `metadata.namespace!=a,metadata.namespace!=b,spec.x=y`). Empty selectors contribute
 * nothing (upstream would render them as a trailing ',', which means the same).
 */
export function andFieldSelectors(selectors: readonly FieldSelector[]): FieldSelector {
  return fieldSelectorOf(selectors.flatMap((s) => s.requirements));
}

/** fields.OneTermNotEqualSelector. */
export function notEqualFieldSelector(field: string, value: string): FieldSelector {
  return fieldSelectorOf([{ field, operator: '!=', value }]);
}
