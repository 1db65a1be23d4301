import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  deeperThan,
  exceedsMaxDepth,
  jsonDepthError,
  MAX_JSON_DEPTH,
  maxDepthMessage,
} from './json-depth.ts';
import { cloneJson, jsonEqual } from '@certkit/apimachinery';

const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const bytes = (text: string) => Buffer.from(text);

function nested(depth: number): unknown {
  let value: unknown = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe('the JSON nesting limit', () => {
  it('takes text nested up to the limit and refuses one level more, with Go’s message', () => {
    assert.equal(jsonDepthError(bytes(objects(MAX_JSON_DEPTH))), undefined);
    assert.equal(
      jsonDepthError(bytes(objects(MAX_JSON_DEPTH + 1))),
      "invalid character '{' exceeded max depth",
    );
    assert.equal(jsonDepthError(bytes(arrays(MAX_JSON_DEPTH))), undefined);
    assert.equal(
      jsonDepthError(bytes(arrays(MAX_JSON_DEPTH + 1))),
      "invalid character '[' exceeded max depth",
    );
  });

  it('counts brackets outside strings only, escaped quotes included', () => {
    const inString = `{"a":"${'{'.repeat(3 * MAX_JSON_DEPTH)}"}`;
    assert.equal(jsonDepthError(bytes(inString)), undefined);
    const escapedQuote = `{"a":"\\"${'['.repeat(3 * MAX_JSON_DEPTH)}"}`;
    assert.equal(jsonDepthError(bytes(escapedQuote)), undefined);
    const afterString = `["\\\\",${arrays(MAX_JSON_DEPTH)}]`;
    assert.equal(jsonDepthError(bytes(afterString)), "invalid character '[' exceeded max depth");
  });

  // Long text with few brackets (a Secret's or a request's base64) is passed without the byte walk; these pin
  // that what the walk finds is still found whenever the count of opening brackets could allow it.
  it('judges long text by its nesting, not by how many brackets it holds', () => {
    const base64 = 'QUJD'.repeat(5000);
    assert.equal(jsonDepthError(bytes(`{"data":{"tls.crt":"${base64}"}}`)), undefined);
    // More opening brackets than the limit, side by side or inside strings: still not deep.
    const siblings = `[${'{},'.repeat(MAX_JSON_DEPTH + 5)}{}]`;
    assert.equal(jsonDepthError(bytes(siblings)), undefined);
    assert.equal(jsonDepthError(bytes(`{"s":"${'{['.repeat(MAX_JSON_DEPTH)}"}`)), undefined);
    // Deep through objects and arrays mixed, after a long value: refused, at the bracket that went too far.
    const mixed = `${'{"a":['.repeat(MAX_JSON_DEPTH / 2)}{}${']}'.repeat(MAX_JSON_DEPTH / 2)}`;
    assert.equal(jsonDepthError(bytes(`[${JSON.stringify(base64)},${mixed}]`)), maxDepthMessage('['));
    assert.equal(
      jsonDepthError(bytes(`{"d":"${base64}","x":${'['.repeat(MAX_JSON_DEPTH)}]}`)),
      maxDepthMessage('['),
    );
  });

  it('tells how deep text is against any bound', () => {
    assert.equal(deeperThan(bytes(objects(600)), 500), true);
    assert.equal(deeperThan(bytes(objects(500)), 500), false);
  });

  it('measures parsed values without recursion, at any depth', () => {
    assert.equal(exceedsMaxDepth(nested(MAX_JSON_DEPTH)), false);
    assert.equal(exceedsMaxDepth(nested(MAX_JSON_DEPTH + 1)), true);
    assert.equal(exceedsMaxDepth(nested(100_000)), true);
    assert.equal(exceedsMaxDepth([[1], { a: [[]] }, 'x']), false);
  });

  it('copies and compares values deeper than structuredClone and the stack go', () => {
    const deep = JSON.parse(objects(50_000)) as unknown;
    const copy = cloneJson(deep);
    assert.notEqual(copy, deep);
    assert.equal(jsonEqual(copy, deep), true);
    const other = JSON.parse(`${'{"a":'.repeat(49_999)}{"b":1}${'}'.repeat(49_999)}`) as unknown;
    assert.equal(jsonEqual(other, deep), false);
  });
});
