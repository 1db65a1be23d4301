/**
 * The two response headers RFC 8555 relies on besides Location and Replay-Nonce: Retry-After (RFC 9110
 * §10.2.3, delay-seconds or an HTTP-date) and Link (RFC 8288), from which the certificate's alternate chains
 * (§7.4.2, rel="alternate") and the directory (rel="index") are read.
 */

export type HeaderValue = string | string[] | undefined;

/** The first value of a header that undici may hand over as a string or, when repeated, a list. */
export function firstHeader(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** When to retry, from a Retry-After value; undefined when absent or unreadable. `now` for tests. */
export function parseRetryAfter(value: HeaderValue, now: number = Date.now()): Date | undefined {
  const text = firstHeader(value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return new Date(now + Number(text) * 1000);
  // An HTTP-date names its month and day (IMF-fixdate, RFC 850 or asctime); Date.parse alone would take "-5"
  // as a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : new Date(date);
}

/**
 * The targets of every Link whose `rel` includes `rel`, resolved against the request URL. A header may be
 * repeated and each value may carry several comma-separated links; the URI sits in angle brackets, so commas
 * inside it do not split.
 */
export function linkTargets(value: HeaderValue, rel: string, base: string): string[] {
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const targets: string[] = [];
  for (const header of values) {
    for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]*)*)/g)) {
      const params = match[2].split(';').slice(1);
      const rels = params
        .map((p) => /^\s*rel\s*=\s*"?([^"]*)"?\s*$/i.exec(p)?.[1])
        .filter((r): r is string => r !== undefined)
        .flatMap((r) => r.toLowerCase().split(/\s+/));
      if (rels.includes(rel.toLowerCase())) targets.push(new URL(match[1], base).toString());
    }
  }
  return targets;
}
