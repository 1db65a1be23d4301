/** "false" under Go's strings.EqualFold, whose case folding also pairs U+017F (long s) with "s". */
const FALSE_ANY_CASE = /^[fF][aA][lL][sS\u017f][eE]$/;

/**
 * The one reading of a boolean query parameter (`watch`, `allowWatchBookmarks`, `sendInitialEvents`,
 * `orphanDependents`, `force`), for the handlers and for the request metrics alike. undefined when absent.
 *
 * kube-apiserver decodes these through its query-parameter conversion (apimachinery runtime's
 * Convert_Slice_string_To_bool and Convert_Slice_string_To_Pointer_bool): the first value counts,
 * "0" and "false" in any letter case are false, and every other value is true, including an empty one
 * (`?watch`) and the `True` the Python client sends. It never refuses a value, so neither does this; see
 * docs/adr/0501-query-booleans.md for why this is not strconv.ParseBool.
 */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  return !(value === '0' || FALSE_ANY_CASE.test(value));
}
