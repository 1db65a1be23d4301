import assert from 'node:assert/strict';

/** Parses Prometheus text into samples, checking every line is a comment or `name{labels} value`. */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})?) (\S+)$/.exec(line);
    assert.ok(m, `not a Prometheus sample line: ${JSON.stringify(line)}`);
    const value = m[2] === '+Inf' ? Infinity : Number(m[2]);
    // Prometheus reads values with Go's ParseFloat, which takes NaN in any case (prom-client writes "Nan").
    assert.ok(!Number.isNaN(value) || /^nan$/i.test(m[2]), `bad value in ${line}`);
    samples.set(m[1], value);
  }
  return samples;
}
