import { RE2JS } from 're2js';

/**
 * Regular expressions as kube-apiserver runs them: Go's `regexp` package, RE2 syntax, matched in time
 * linear in the input. A CRD's `pattern` and a CEL rule's `matches`/`find`/`findAll` come from the CRD's
 * author (and in CEL possibly from the object itself), and the value from whoever creates the object.
 * ECMAScript's backtracking `RegExp` takes exponential time on patterns such as `^(a+)+$`: a 30-character
 * value then blocked the event loop, and with it the whole server, for seconds, and a few more characters
 * for hours. re2js, a port of RE2, cannot backtrack, and refuses what RE2 refuses (backreferences,
 * lookaround) with Go's own `error parsing regexp: …` messages, as kube-apiserver does when the CRD is
 * written.
 */

/** Compiled patterns by source; bounded, since CEL may compile patterns taken from objects. */
const cache = new Map<string, RE2JS | Error>();
const MAX_CACHED = 512;

/** The compiled pattern, or the Error Go's regexp.Compile would return (its message is Go's). */
export function compileGoRegexp(pattern: string): RE2JS | Error {
  let compiled = cache.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = RE2JS.compile(pattern);
    } catch (e) {
      compiled = e instanceof Error ? e : new Error(String(e));
    }
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(pattern, compiled);
  }
  return compiled;
}

function compileOrThrow(pattern: string): RE2JS {
  const compiled = compileGoRegexp(pattern);
  if (compiled instanceof Error) throw compiled;
  return compiled;
}

/** regexp.MatchString: whether the pattern matches anywhere in the value (unanchored). */
export function goRegexpMatch(pattern: string, value: string): boolean {
  return compileOrThrow(pattern).test(value);
}

/** regexp.FindString: the leftmost match, or '' when there is none. */
export function goRegexpFind(pattern: string, value: string): string {
  const matcher = compileOrThrow(pattern).matcher(value);
  return matcher.find() ? (matcher.group() ?? '') : '';
}

/**
 * regexp.FindAllString(value, -1): the successive non-overlapping matches. As in Go, an empty match right
 * where the previous match ended is skipped (ECMAScript's matchAll would report it).
 */
export function goRegexpFindAll(pattern: string, value: string): string[] {
  const matcher = compileOrThrow(pattern).matcher(value);
  const out: string[] = [];
  let previousEnd = -1;
  while (matcher.find()) {
    const start = matcher.start();
    const end = matcher.end();
    if (!(start === end && start === previousEnd)) out.push(matcher.group() ?? '');
    previousEnd = end;
  }
  return out;
}
