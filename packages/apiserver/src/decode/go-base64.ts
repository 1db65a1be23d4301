/**
 * Where Go's base64.StdEncoding.DecodeString fails on a string, as its CorruptInputError reports it (a byte
 * offset into the UTF-8 text), or undefined when Go reads it: padded standard alphabet, line breaks skipped
 * anywhere, bits past the last byte ignored. Node's decoder skips what it cannot read instead of failing.
 */

const NEWLINE = 10;
const RETURN = 13;
const PAD = 61; // '='

function isAlphabet(c: number): boolean {
  return (
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 43 /* + */ ||
    c === 47 /* / */
  );
}

export function goBase64ErrorAt(text: string): number | undefined {
  const src = Buffer.from(text, 'utf8');
  const skipNewlines = (i: number) => {
    while (i < src.length && (src[i] === NEWLINE || src[i] === RETURN)) i++;
    return i;
  };
  let si = 0;
  // One quantum of four characters at a time, as decodeQuantum reads them.
  while (si < src.length) {
    for (let j = 0; j < 4; j++) {
      if (si === src.length) return j === 0 ? undefined : si - j;
      const c = src[si++];
      if (isAlphabet(c)) continue;
      if (c === NEWLINE || c === RETURN) {
        j--;
        continue;
      }
      if (c !== PAD || j < 2) return si - 1;
      if (j === 2) {
        // "==" is expected: the first "=" is read.
        si = skipNewlines(si);
        if (si === src.length) return src.length;
        if (src[si] !== PAD) return si - 1;
        si++;
      }
      si = skipNewlines(si);
      // Nothing may follow the padding.
      return si < src.length ? si : undefined;
    }
  }
  return undefined;
}
