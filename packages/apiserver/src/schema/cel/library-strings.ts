import type { Environment } from '@marcbachmann/cel-js';

/**
 * The parts of cel-go's strings extension (version 2, which kube-apiserver enables) that
 * @marcbachmann/cel-js lacks: charAt, replace, reverse, format and strings.quote. The library's parser reads
 * `strings.quote(x)` as a method of a variable named `strings`, so the namespace is a constant of its own type.
 */

class StringsNamespace {}

function codePoints(text: string): string[] {
  return [...text];
}

function replace(text: string, from: string, to: string, limit: bigint): string {
  if (limit === 0n) return text;
  if (from === '') {
    // Go's strings.Replace with an empty old string inserts at every code point boundary.
    const points = codePoints(text);
    let out = '';
    let done = 0n;
    for (let i = 0; i <= points.length; i++) {
      if (limit < 0n || done < limit) {
        out += to;
        done++;
      }
      if (i < points.length) out += points[i];
    }
    return out;
  }
  let out = '';
  let rest = text;
  let done = 0n;
  for (;;) {
    const at = rest.indexOf(from);
    if (at < 0 || (limit >= 0n && done >= limit)) return out + rest;
    out += rest.slice(0, at) + to;
    rest = rest.slice(at + from.length);
    done++;
  }
}

function formatValue(verb: string, value: unknown, precision: number | undefined): string {
  switch (verb) {
    case 's':
      return typeof value === 'string' ? value : stringOf(value);
    case 'd':
      if (typeof value !== 'bigint')
        throw new Error(
          `error during formatting: decimal clause can only be used on integers, was given ${typeof value}`,
        );
      return value.toString();
    case 'f':
      if (typeof value !== 'number' && typeof value !== 'bigint')
        throw new Error('error during formatting: fixed-point clause can only be used on doubles');
      return Number(value).toFixed(precision ?? 6);
    case 'e':
      return Number(value)
        .toExponential(precision ?? 6)
        .replace(/e([+-])(\d)$/, 'e$10$2');
    case 'b':
      return typeof value === 'boolean' ? String(value) : BigInt(value as bigint).toString(2);
    case 'o':
      return BigInt(value as bigint).toString(8);
    case 'x':
    case 'X': {
      const hex =
        typeof value === 'string'
          ? [...new TextEncoder().encode(value)].map((b) => b.toString(16).padStart(2, '0')).join('')
          : BigInt(value as bigint).toString(16);
      return verb === 'X' ? hex.toUpperCase() : hex;
    }
    default:
      throw new Error(`error during formatting: unrecognized formatting clause "${verb}"`);
  }
}

function stringOf(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stringOf).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
    return `{${entries.map(([k, v]) => `${stringOf(k)}: ${stringOf(v)}`).join(', ')}}`;
  }
  return String(value);
}

/** "%s is %d".format([a, b]): the clauses cel-go's format supports (%s %d %f %e %b %o %x %X, %.Nf, %%). */
function format(template: string, args: unknown[]): string {
  let next = 0;
  return template.replace(
    /%(?:\.(\d+))?([a-zA-Z%])/g,
    (_match, precision: string | undefined, verb: string) => {
      if (verb === '%') return '%';
      if (next >= args.length) throw new Error(`index ${next} out of range`);
      return formatValue(verb, args[next++], precision === undefined ? undefined : Number(precision));
    },
  );
}

/** strings.quote: a double-quoted CEL string literal with its escapes. */
function quote(text: string): string {
  const escapes: Record<string, string> = {
    '\u0007': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  return `"${[...text].map((c) => escapes[c] ?? c).join('')}"`;
}

export function registerStrings(env: Environment): void {
  const method = (
    name: string,
    params: [string, string][],
    returnType: string,
    handler: (...args: never[]) => unknown,
  ) =>
    env.registerFunction({
      name,
      receiverType: 'string',
      returnType,
      params: params.map(([n, type]) => ({ name: n, type })),
      handler: handler as (...args: unknown[]) => unknown,
    });
  method('charAt', [['index', 'int']], 'string', (text: string, index: bigint) => {
    const points = codePoints(text);
    if (index < 0n || index > BigInt(points.length)) throw new Error(`index out of range: ${index}`);
    return points[Number(index)] ?? '';
  });
  method(
    'replace',
    [
      ['from', 'string'],
      ['to', 'string'],
    ],
    'string',
    (text: string, from: string, to: string) => replace(text, from, to, -1n),
  );
  method(
    'replace',
    [
      ['from', 'string'],
      ['to', 'string'],
      ['limit', 'int'],
    ],
    'string',
    (text: string, from: string, to: string, limit: bigint) => replace(text, from, to, limit),
  );
  method('reverse', [], 'string', (text: string) => codePoints(text).reverse().join(''));
  method('format', [['args', 'list<dyn>']], 'string', (text: string, args: unknown[]) => format(text, args));
  env.registerType('k8s.StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'k8s.StringsNamespace', new StringsNamespace());
  env.registerFunction({
    name: 'quote',
    receiverType: 'k8s.StringsNamespace',
    returnType: 'string',
    params: [{ name: 'text', type: 'string' }],
    handler: ((_ns: StringsNamespace, text: string) => quote(text)) as (...args: unknown[]) => unknown,
  });
}
