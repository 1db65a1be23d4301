/**
 * Kubernetes timestamps as they go on the wire. metav1.Time is RFC 3339 in UTC at whole seconds
 * (`2026-01-02T03:04:05Z`); metav1.MicroTime, used by Leases and events.k8s.io, carries six fractional digits
 * (`2026-01-02T03:04:05.678000Z`). See k8s.io/apimachinery/pkg/apis/meta/v1/time.go and micro_time.go.
 */

/**
 * Recent answers of formatTime, by second. The API server stamps the current second on every create, and the
 * controllers format the same notBefore, notAfter and renewal times at every reconcile: toISOString costs more
 * than the rest of a reconcile that changes nothing. The map forgets its oldest second once full, so it
 * holds both a run of "now"s and a working set of certificate times.
 */
const formatted = new Map<number, string>();
const FORMATTED_CAPACITY = 1024;

/** metav1.Time's text: RFC 3339 in UTC, whole seconds (the milliseconds are dropped, as Go truncates). */
export function formatTime(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  let text = formatted.get(second);
  if (text === undefined) {
    // Throws RangeError for an invalid Date before anything is remembered.
    text = `${date.toISOString().slice(0, 19)}Z`;
    if (formatted.size >= FORMATTED_CAPACITY) formatted.delete(formatted.keys().next().value!);
    formatted.set(second, text);
  }
  return text;
}

/**
 * metav1.MicroTime's text: RFC 3339 in UTC with six fractional digits. A Date holds milliseconds, so by
 * default the last three digits are zeros; `microsecond` (0 to 999999, within the date's second) gives the
 * full precision when the caller has it, as a decoded protobuf MicroTime does.
 */
export function formatMicroTime(date: Date, microsecond?: number): string {
  const iso = date.toISOString();
  const fraction =
    microsecond === undefined ? `${iso.slice(20, 23)}000` : String(microsecond).padStart(6, '0');
  return `${iso.slice(0, 19)}.${fraction}Z`;
}

/**
 * Go's time.Time.String of a UTC time (`2026-01-02 03:04:05.5 +0000 UTC`): not a wire format, but how
 * upstream's messages print times, so messages that quote one must print it this way.
 */
export function formatGoTimeString(date: Date): string {
  const iso = date.toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''} +0000 UTC`;
}
