import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, YAMLParseError } from 'yaml';
import { isObject, newBadRequest } from '@certkit/apimachinery';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from '@certkit/apimachinery/json-bytes';
import {
  InexactNumber,
  InexactNumberError,
  markInexactYamlNumbers,
  mayHoldInexactNumber,
  parseJsonMarkingInexact,
  throwIfInexact,
} from './exact-numbers.ts';
import { deeperThan, exceedsMaxDepth, jsonDepthError, maxDepthMessage } from './json-depth.ts';

/** Nesting the YAML parser's recursion is sure to take; it gives up at about 1,500 levels. */
const YAML_PARSER_DEPTH = 500;

/**
 * A YAML (or JSON) request body as a value, under the nesting limit JSON bodies have (decode/json-depth.ts).
 * Throws an Error whose message is the reason alone (the caller words the Status): Go's depth message, or the
 * parser's. Brackets count in flow-style YAML as in JSON, so a body nested past the limit is refused before
 * parsing; block-style nesting is counted by the parser's recursion and in the value.
 */
export function parseYamlRequestBody(body: Buffer): unknown {
  const tooDeep = jsonDepthError(body);
  if (tooDeep) throw new Error(tooDeep);
  let value: unknown;
  try {
    // Clients send JSON. Nested deeper than the YAML parser goes but within the limit, it is read as the
    // JSON it is, so that a YAML body takes what a JSON one takes.
    value = deeperThan(body, YAML_PARSER_DEPTH) ? parseJsonText(body) : parseYamlBody(body.toString('utf8'));
  } catch (err) {
    throw isStackExhaustion(err) ? new Error(maxDepthMessage()) : err;
  }
  if (exceedsMaxDepth(value)) throw new Error(maxDepthMessage());
  // A number the server would not store as written: InexactNumberError, which callers send as its Status.
  if (mayHoldInexactNumber(body.toString('utf8'))) throwIfInexact(value);
  return value;
}

/**
 * A create, update or delete body sent as application/yaml, which kube-apiserver's YAML serializer decodes
 * by converting it to JSON (sigs.k8s.io/yaml): a body that does not parse is a 400 worded as that
 * conversion words it. Repeated keys are refused as in a server-side apply body.
 */
export function parseYamlObject(body: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYamlRequestBody(body);
  } catch (err) {
    if (err instanceof InexactNumberError) throw err.status;
    throw newBadRequest(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  // Nothing but whitespace or comments reads as null.
  if (value === null || value === undefined) throw newBadRequest('the request body is empty');
  if (!isObject(value)) throw newBadRequest('the request body must be a YAML or JSON object');
  return value;
}

/**
 * The parser ran out of stack on deep nesting: a RangeError from its own recursion, or the same reported as
 * a YAMLParseError coded RESOURCE_EXHAUSTION when it happened while composing the document.
 */
function isStackExhaustion(err: unknown): boolean {
  if (err instanceof RangeError) return true;
  return err instanceof YAMLParseError && err.code === 'RESOURCE_EXHAUSTION';
}

/** JSON text as JSON.parse reads it; text that is not JSON is flow-style YAML, for the YAML parser. */
function parseJsonText(body: Buffer): unknown {
  try {
    return parseJsonMarkingInexact(body.toString('utf8'));
  } catch {
    return parseYamlBody(body.toString('utf8'));
  }
}

/**
 * Parses a YAML (or JSON) request body, refusing duplicate keys in a mapping as the `yaml` package does by
 * default, but in linear time: the package's own check compares each key with every earlier key of its map,
 * which took 9 s for an apply of a ConfigMap with 20,000 keys. So the document is parsed without it and
 * the keys of each map are checked through a Set.
 *
 * Clients send JSON (kubectl, client-go, client-node), which JSON.parse reads 20 times faster than the YAML
 * parser; a JSON object reads the same either way except for duplicate keys (JSON.parse keeps the last), so
 * it is taken as JSON when it has none, and otherwise read as YAML, which reports them.
 */
export function parseYamlBody(text: string): unknown {
  const json = parseJsonObject(text);
  if (json !== undefined) return json;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter });
  const duplicate = firstDuplicateKey(doc.contents);
  const [error] = doc.errors;
  // The error that comes first in the text, as the package would have reported it while composing.
  if (error && (duplicate === undefined || error.pos[0] <= duplicate.offset)) throw error;
  if (duplicate !== undefined) {
    const { line, col } = lineCounter.linePos(duplicate.offset);
    throw new Error(
      `Map keys must be unique at line ${line}, column ${col}: key ${JSON.stringify(String(duplicate.key))} already set in map`,
    );
  }
  if (mayHoldInexactNumber(text)) markInexactYamlNumbers(doc);
  return doc.toJS();
}

/**
 * Nesting up to which a JSON body is read by JSON.parse. Kubernetes objects are far shallower; a deeper body
 * takes the YAML path, so that its handling (and how it fails) does not depend on which parser read it.
 */
const MAX_JSON_FAST_DEPTH = 64;

/** A JSON object without duplicate keys, or undefined for anything else. */
function parseJsonObject(text: string): unknown {
  if (!/^[ \t\r\n]*\{/.test(text)) return undefined;
  const shape = jsonShape(text);
  if (shape.depth > MAX_JSON_FAST_DEPTH) return undefined;
  let value: unknown;
  try {
    value = parseJsonMarkingInexact(text);
  } catch {
    return undefined;
  }
  // Every member in the text is a key in the value, unless a key repeated within its object.
  return shape.members === keysIn(value) ? value : undefined;
}

/**
 * Object members (colons outside strings) and the deepest nesting in a JSON text. Only meaningful for valid
 * JSON, which is all it is asked about once JSON.parse has accepted the text.
 */
function jsonShape(text: string): { members: number; depth: number } {
  let members = 0;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === COLON) members++;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) deepest = Math.max(deepest, ++depth);
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return { members, depth: deepest };
}

/** Own keys of every object in a parsed JSON value. */
function keysIn(value: unknown): number {
  let keys = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
    } else if (typeof node === 'object' && node !== null && !(node instanceof InexactNumber)) {
      for (const member of Object.values(node)) {
        keys++;
        stack.push(member);
      }
    }
  }
  return keys;
}

/**
 * The first key (in document order) that repeats an earlier key of its map. Keys are equal as the `yaml`
 * package's check has them: scalars with the same value (`===`, so NaN never repeats); other keys never.
 */
function firstDuplicateKey(root: unknown): { key: unknown; offset: number } | undefined {
  let first: { key: unknown; offset: number } | undefined;
  // An explicit stack: a deeply nested body must not overflow the call stack here.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          if (seen.has(key.value)) {
            const offset = key.range?.[0] ?? 0;
            if (!first || offset < first.offset) first = { key: key.value, offset };
          } else if (typeof key.value !== 'object' || key.value === null) seen.add(key.value);
        }
        stack.push(key, pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    } else if (isPair(node)) {
      stack.push(node.key, node.value);
    }
  }
  return first;
}
