import { newBadRequest, parseGoDuration } from '@certkit/apimachinery';

/**
 * kube-apiserver's request deadline filter reads `?timeout=` on every request that is not long-running (not a
 * watch), before authentication: a value Go's time.ParseDuration refuses is a 400, worded as the filter words
 * it. A well-formed one is taken without a deadline of its own here: what a request may wait on is bounded
 * where it waits (the body, a resourceVersion not reached, webhooks, a stalled list).
 */
export function refuseMalformedTimeout(query: URLSearchParams, isLongRunning: () => boolean): void {
  const value = query.get('timeout');
  if (!value || isLongRunning()) return;
  try {
    parseGoDuration(value);
  } catch (err) {
    throw newBadRequest(`invalid timeout specified in the request URL - ${(err as Error).message}`);
  }
}
