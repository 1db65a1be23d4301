import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { parseYamlBody } from './yaml-body.ts';

/** The message of what `parseYamlBody` throws, first line only (the yaml package adds a source excerpt). */
function failure(text: string): string {
  try {
    parseYamlBody(text);
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
  assert.fail(`parsed: ${text}`);
}

describe('parseYamlBody', () => {
  it('reads JSON objects exactly as the YAML parser does', () => {
    const bodies = [
      '{"a":1}',
      '  {"a" : 1 , "b" :[ ] }\n',
      '{\n\t"a": 1,\n\t"b": [\n\t\t1\n\t]\n}',
      `{"${'k'.repeat(2000)}":1}`,
      '{"a":"\\ud800","b":"\\/\\b\\f\\n\\r\\t\\u00e9","c":"x # y","d":"--- x"}',
      // Numbers the server would not store as written are refused on either path (exact-numbers.test.ts).
      '{"a":123456789012345,"b":1e300,"c":-0,"d":1.5E+3,"e":0.1,"f":9007199254740991}',
      '{"":1,"__proto__":{"x":1},"n":null,"t":true,"f":false}',
      '{"a":{"b":{"c":[{"d":null},true,false,"é😀"]}}}',
      '\ufeff{"a":1}',
    ];
    for (const body of bodies) {
      const fromYaml = parse(body);
      const read = parseYamlBody(body) as Record<string, unknown>;
      assert.deepEqual(read, fromYaml, body.slice(0, 40));
      assert.ok(Object.is(read.c, fromYaml.c), 'the sign of zero is kept');
    }
  });

  it('reads YAML', () => {
    assert.deepEqual(parseYamlBody('kind: ConfigMap\ndata:\n  a: "1"\n  b: [x, y]\n'), {
      kind: 'ConfigMap',
      data: { a: '1', b: ['x', 'y'] },
    });
    assert.equal(parseYamlBody(''), null);
  });

  it('reads JSON nested deeper than 64 levels through the YAML parser, with the same result', () => {
    const deep = `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`;
    assert.deepEqual(parseYamlBody(deep), parse(deep));
  });

  it('refuses a duplicate key with its line and column, where the yaml package would', () => {
    const cases: [string, string][] = [
      ['a: 1\nb: 2\na: 3\n', 'at line 3, column 1: key "a"'],
      ['{"a":1,"b":{"c":1,"c":2},"a":2}', 'at line 1, column 19: key "c"'],
      ['{\n  "a": 1,\n  "a": 1\n}', 'at line 3, column 3: key "a"'],
      ['x:\n  - {k: 1, k: 2}\n', 'at line 2, column 12: key "k"'],
      ['&x a: 1\n!!str a: 2\n', 'at line 2, column 7: key "a"'],
      ['? a\n: 1\n? a\n: 2\n', 'at line 3, column 3: key "a"'],
      ['1: a\n0x1: b\n', 'at line 2, column 1: key "1"'],
      // The duplicate comes before the syntax error, so it is what is reported.
      ['a: 1\na: 2\nb: [1\n', 'at line 2, column 1: key "a"'],
    ];
    for (const [body, where] of cases) {
      assert.equal(failure(body), `Map keys must be unique ${where} already set in map`, body);
      assert.throws(() => parse(body), /Map keys must be unique/, 'the yaml package refuses it too');
    }
  });

  it('keeps what the yaml package accepts as different keys', () => {
    assert.deepEqual(parseYamlBody('1: a\n"1": b\n'), { 1: 'b' });
    assert.deepEqual(parseYamlBody('{"a":{"a":1}}'), { a: { a: 1 } });
    const nan = parseYamlBody('.nan: 1\n.nan: 2\n');
    assert.deepEqual(nan, parse('.nan: 1\n.nan: 2\n'));
  });

  it('reports the first error in the text, a syntax error before a duplicate key', () => {
    assert.match(
      failure('a: [1, 2\nb: 1\nb: 2\n'),
      /^Flow sequence in block collection must be sufficiently indented/,
    );
    assert.match(failure('a: b: c'), /^Nested mappings are not allowed in compact mappings/);
  });

  it('checks the keys of a large map in linear time', () => {
    const bodies = (keys: number) => {
      const entries = Array.from({ length: keys }, (_, i) => `  key-${i}: v`);
      const members = Array.from({ length: keys }, (_, i) => `"key-${i}":"v"`);
      return {
        yaml: `data:\n${entries.join('\n')}\n  key-7: again\n`,
        json: `{"data":{${members.join(',')},"key-7":"again"}}`,
      };
    };
    /** CPU ms of refusing both bodies, the cheapest of three runs. */
    const cost = (keys: number) => {
      const { yaml, json } = bodies(keys);
      let best = Infinity;
      for (let run = 0; run < 3; run++) {
        const cpu = process.cpuUsage();
        assert.equal(
          failure(yaml),
          `Map keys must be unique at line ${keys + 2}, column 3: key "key-7" already set in map`,
        );
        assert.match(failure(json), /^Map keys must be unique at line 1, column \d+: key "key-7"/);
        const used = process.cpuUsage(cpu);
        best = Math.min(best, (used.user + used.system) / 1000);
      }
      return best;
    };
    cost(100);
    const small = cost(3_000);
    const large = cost(30_000);
    // Linear is ~10; comparing every key with every earlier one (the yaml package's check) ~100.
    assert.ok(large / small < 30, `${large.toFixed(0)} / ${small.toFixed(0)} CPU ms`);
  });
});
