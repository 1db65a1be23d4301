/**
 * Values printed the way Go's fmt prints them, for error messages that must read as kube-apiserver's: its
 * field errors show a string value with %q and anything else with %#v, so a client comparing messages (or a
 * person reading both) sees the same text.
 */

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const GRAPHIC = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Whether Go's `strconv.IsPrint` holds for a code point: `%q` prints it as is rather than escaped. */
export function isGoPrintable(codePoint: number): boolean {
  return codePoint === 0x20 || GRAPHIC.test(String.fromCodePoint(codePoint));
}

const SHORT_ESCAPES: Record<number, string> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
  0x5c: '\\\\',
  0x22: '\\"',
};

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** strconv.Quote (and so %q): printable characters kept, the rest escaped as \x, \u or \U. */
export function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    const short = SHORT_ESCAPES[cp];
    if (short !== undefined) out += short;
    else if (isGoPrintable(cp)) out += char;
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    // A lone surrogate is not valid UTF-8; Go would have seen the replacement character instead.
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

/** %#U: `U+0001`, followed by the quoted character when it is printable (`U+0041 'A'`). */
export function goUnicodeVerb(codePoint: number): string {
  const code = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  return isGoPrintable(codePoint) ? `${code} '${String.fromCodePoint(codePoint)}'` : code;
}

/**
 * A value already rendered in Go syntax, for a field error whose value JSON cannot show as Go does, such as
 * `[]string{"Foo"}` (a []string printed with %#v).
 */
export class GoSyntax {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  /** Serialises as its Go text, so a field error carrying it shows that text. */
  toJSON(): string {
    return this.text;
  }
}

/** A []string printed with %#v. */
export function goStringSlice(values: readonly string[]): GoSyntax {
  return new GoSyntax(`[]string{${values.map(goQuote).join(', ')}}`);
}
