/**
 * Duplicate keys in a JSON request body, which JSON.parse silently resolves to the last value and kube-apiserver's
 * strict decoder reports (`duplicate field "metadata.name"`). Nearly every body has none, so the text is scanned
 * only when a cheap count says it might: every member of an object is a key string followed by one colon, so
 * a body with no more colons right after a closing quote than the parsed value has members cannot repeat a key.
 * Colons inside strings rarely follow a quote (a timestamp's do not: counting every colon sent nearly every
 * status update and Event, all of which carry timestamps, through the full scan, which cost more than the
 * JSON.parse itself); one that does (`\":` in a string) only makes the count larger, never smaller.
 */

const QUOTE = 34;
const COLON = 58;

/** Whether the character before index `i` (JSON whitespace skipped) is a double quote. */
function afterQuote(text: Buffer | string, i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const c = typeof text === 'string' ? text.charCodeAt(j) : text[j];
    // JSON's whitespace: space, tab, line feed, carriage return.
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    return c === QUOTE;
  }
  return false;
}

/** An upper bound of the members written in the text: the colons that follow a string. */
export function countKeyColons(text: Buffer | string): number {
  let count = 0;
  if (typeof text === 'string') {
    for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) if (afterQuote(text, i)) count++;
  } else {
    // By byte value: a Buffer searched for a string converts the string on every call.
    for (let i = text.indexOf(COLON); i !== -1; i = text.indexOf(COLON, i + 1))
      if (afterQuote(text, i)) count++;
  }
  return count;
}

function countMembers(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += countMembers(item);
    return count;
  }
  for (const key in value) count += 1 + countMembers((value as Record<string, unknown>)[key]);
  return count;
}

/** The end (index after the closing quote) of the string starting at `start`, and its decoded text. */
function readString(text: string, start: number): { end: number; value: string } {
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return { end: text.length, value: '' };
    let backslashes = 0;
    for (let j = quote - 1; j > start && text.charCodeAt(j) === 92; j--) backslashes++;
    if (backslashes % 2 === 0) {
      const raw = text.slice(start, quote + 1);
      return { end: quote + 1, value: raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1) };
    }
    i = quote + 1;
  }
}

interface Frame {
  path: string;
  /** Member names seen so far; undefined for an array. */
  keys?: Set<string>;
  index: number;
}

/** The paths of the repeated members, each once per repetition, in document order. Expects valid JSON. */
function scanDuplicates(text: string): string[] {
  const found: string[] = [];
  const stack: Frame[] = [];
  let pendingKey: string | undefined;
  const childPath = (): string => {
    const top = stack.at(-1);
    if (!top) return '';
    if (top.keys === undefined) return `${top.path}[${top.index}]`;
    return top.path === '' ? (pendingKey ?? '') : `${top.path}.${pendingKey}`;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const { end, value } = readString(text, i);
      const top = stack.at(-1);
      let j = end;
      while (j < text.length && (text[j] === ' ' || text[j] === '\n' || text[j] === '\r' || text[j] === '\t'))
        j++;
      if (top?.keys !== undefined && text.charCodeAt(j) === 58 /* : */) {
        pendingKey = value;
        if (top.keys.has(value)) found.push(top.path === '' ? value : `${top.path}.${value}`);
        else top.keys.add(value);
        i = j;
      } else i = end - 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      const path = childPath();
      stack.push({ path, keys: c === 123 ? new Set() : undefined, index: 0 });
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      stack.pop();
    } else if (c === 44 /* , */) {
      const top = stack.at(-1);
      if (top && top.keys === undefined) top.index++;
    }
  }
  return found;
}

/** The repeated members of the JSON body `text`, given what JSON.parse made of it. */
export function duplicateFields(text: Buffer | string, parsed: unknown): string[] {
  if (countKeyColons(text) <= countMembers(parsed)) return [];
  return scanDuplicates(typeof text === 'string' ? text : text.toString('utf8'));
}
