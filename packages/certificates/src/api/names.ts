/**
 * Name shortening shared by the names cert-manager gives the objects its controllers create
 * (pkg/api/util/names.go): CertificateRequests (controllers/certificates/shared/names.ts) and ACME Orders and
 * Challenges (acme/names.ts).
 */

/**
 * DNSSafeShortenToNCharacters: `name` unchanged when shorter than `max` bytes, else cut to `max` and back
 * to its last ASCII letter or digit, so the result never ends in `.` or `-`. Bytes, not characters, as Go
 * slices strings.
 */
export function dnsSafeShorten(name: string, max: number): string {
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length < max) return name;
  if (max <= 0) return '';
  const head = bytes.subarray(0, max);
  for (let i = head.length - 1; i >= 0; i--) {
    const c = head[i];
    const alphanumeric = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (alphanumeric) return head.subarray(0, i + 1).toString('utf8');
  }
  return '';
}
