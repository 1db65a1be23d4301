/**
 * The subset of Kubernetes JSONPath that CRD printer columns use: `.a.b`, `['a.b']`, `[0]`, `[*]` and filters
 * such as `[?(@.type=="Ready")]`. Returns every value the path reaches, in document order.
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' }
  | { kind: 'filter'; path: string[]; op: '==' | '!=' | 'exists'; value?: unknown };

export function compileJsonPath(expression: string): Step[] {
  let text = expression.trim();
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (text.startsWith('$')) text = text.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      i++;
      let end = i;
      while (end < text.length && text[end] !== '.' && text[end] !== '[') end++;
      const name = text.slice(i, end);
      if (name === '*') steps.push({ kind: 'wildcard' });
      else if (name) steps.push({ kind: 'field', name });
      i = end;
    } else if (c === '[') {
      const end = findClosingBracket(text, i);
      const inner = text.slice(i + 1, end).trim();
      steps.push(parseBracket(inner, expression));
      i = end + 1;
    } else {
      throw new Error(`unrecognized character in JSONPath ${JSON.stringify(expression)} at ${i}`);
    }
  }
  return steps;
}

function findClosingBracket(text: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  throw new Error(`unclosed '[' in JSONPath ${JSON.stringify(text)}`);
}

function parseBracket(inner: string, expression: string): Step {
  if (inner === '*') return { kind: 'wildcard' };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted) return { kind: 'field', name: quoted[2] };
  const filter = /^\?\(@((?:\.[^.=!\s)]+)+)\s*(?:(==|!=)\s*(.+?))?\s*\)$/.exec(inner);
  if (filter) {
    const path = filter[1].slice(1).split('.');
    if (!filter[2]) return { kind: 'filter', path, op: 'exists' };
    return { kind: 'filter', path, op: filter[2] as '==' | '!=', value: parseLiteral(filter[3]) };
  }
  throw new Error(`unsupported JSONPath element [${inner}] in ${JSON.stringify(expression)}`);
}

function parseLiteral(text: string): unknown {
  const quoted = /^(['"])(.*)\1$/.exec(text);
  if (quoted) return quoted[2];
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  const n = Number(text);
  return Number.isNaN(n) ? text : n;
}

function child(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

export function evaluateJsonPath(steps: Step[], root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const value of current) {
      switch (step.kind) {
        case 'field': {
          const v = child(value, step.name);
          if (v !== undefined) next.push(v);
          break;
        }
        case 'index':
          if (Array.isArray(value)) {
            const v = value[step.index < 0 ? value.length + step.index : step.index];
            if (v !== undefined) next.push(v);
          }
          break;
        case 'wildcard':
          // One by one: spread into push, an array of 300,000 items overflowed the stack, and a Table
          // (`kubectl get`) of the whole resource was a 500.
          if (Array.isArray(value)) for (const item of value) next.push(item);
          else if (value && typeof value === 'object')
            for (const item of Object.values(value)) next.push(item);
          break;
        case 'filter':
          if (Array.isArray(value)) {
            for (const item of value) {
              const v = step.path.reduce<unknown>(child, item);
              const keep =
                step.op === 'exists'
                  ? v !== undefined
                  : step.op === '=='
                    ? v === step.value
                    : v !== step.value;
              if (keep) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current;
}
