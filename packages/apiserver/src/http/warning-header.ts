/**
 * A `Warning` header value as kube-apiserver writes it (`299 - "<text>"`, apimachinery's NewWarningHeader):
 * `"` and `\` escaped, every other character as it is, in UTF-8. Text with a control character is not a
 * valid warning there and is dropped (undefined), as kube-apiserver drops it.
 *
 * Why the bytes: Node writes header values in latin1 and refuses characters above U+00FF (setHeader throws),
 * so text that names a field with any other character (`unknown field "spec.se\ufeffcretName"`) would turn
 * a successful write into a 500. Each UTF-8 byte as one latin1 character puts Go's bytes on the wire.
 */
export function warningHeaderValue(text: string): string | undefined {
  // unicode.IsControl: the C0 and C1 controls and DEL.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(text)) return undefined;
  const quoted = `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return `299 - ${Buffer.from(quoted, 'utf8').toString('latin1')}`;
}
