/**
 * Property names as rules spell them (k8s.io/apiserver/pkg/cel/escaping.go): a property that is a CEL
 * keyword is `__{keyword}__`, and `__`, `.`, `-`, `/` in names become `__underscores__`, `__dot__`,
 * `__dash__`, `__slash__`. Names with other characters cannot be reached from a rule.
 */

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** The identifier a rule uses for a property, or undefined when the property is out of reach. */
export function escapeProperty(name: string): string | undefined {
  // Every value of every write goes through here: the few distinct names a schema has are remembered.
  let escaped = escapedNames.get(name);
  if (escaped === undefined && !escapedNames.has(name)) {
    escaped = escape(name);
    if (escapedNames.size < 10_000) escapedNames.set(name, escaped);
  }
  return escaped;
}

const escapedNames = new Map<string, string | undefined>();

function escape(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
}
