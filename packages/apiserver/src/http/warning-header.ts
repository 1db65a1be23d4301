import type { ServerResponse } from 'node:http';

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

/** kube-apiserver's recorder limits (filters/warning.go): about 4 Ki characters in all, 256 each when cut. */
const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

/** What one response's warnings are so far: kube-apiserver's recorder, per response. */
interface WarningRecorder {
  recorded: Set<string>;
  ordered: string[];
  /** Characters (code points) of warning text written so far. */
  written: number;
  truncating: boolean;
  headers: string[];
}

const recorders = new WeakMap<ServerResponse, WarningRecorder>();

/** The text cut to `max` code points, and how many it has. */
function cut(text: string, max: number): [string, number] {
  const runes = [...text];
  return runes.length > max ? [runes.slice(0, max).join(''), max] : [text, runes.length];
}

function record(r: WarningRecorder, text: string): void {
  if (text.length === 0 || (r.truncating && r.written >= TRUNCATE_AT_TOTAL_RUNES) || r.recorded.has(text))
    return;
  r.recorded.add(text);
  r.ordered.push(text);
  const [shown, runes] = cut(text, r.truncating ? TRUNCATE_ITEM_RUNES : Infinity);
  const header = warningHeaderValue(shown);
  if (header === undefined) return;
  if (r.truncating || r.written + runes <= TRUNCATE_AT_TOTAL_RUNES) {
    r.written += runes;
    r.headers.push(header);
    return;
  }
  // Past the total: from now on each warning is cut, those already written too.
  r.truncating = true;
  r.written = 0;
  r.headers = [];
  for (const earlier of r.ordered) {
    const [cutText, cutRunes] = cut(earlier, TRUNCATE_ITEM_RUNES);
    const value = warningHeaderValue(cutText);
    if (value === undefined) continue;
    r.written += cutRunes;
    r.headers.push(value);
  }
}

/**
 * Adds `Warning` headers to a response as kube-apiserver's warning recorder does: each text once, and
 * about 4 Ki characters in all: past that, every warning is cut to 256 characters and, once the total is
 * reached again, the rest dropped. Without the bound, an object with 30000 unknown fields got 30000
 * headers (a megabyte), which clients refuse (Python's http.client stops at 100 headers): a write that
 * succeeded looked to them like a broken connection.
 */
export function addWarnings(res: ServerResponse, texts: readonly string[]): void {
  if (res.headersSent || texts.length === 0) return;
  let recorder = recorders.get(res);
  if (!recorder) {
    recorder = { recorded: new Set(), ordered: [], written: 0, truncating: false, headers: [] };
    recorders.set(res, recorder);
  }
  for (const text of texts) record(recorder, text);
  if (recorder.headers.length > 0) res.setHeader('Warning', recorder.headers);
}
