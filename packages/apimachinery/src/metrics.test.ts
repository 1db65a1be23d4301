import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from './metrics.ts';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and cumulative histograms in the text format', () => {
    const r = new MetricsRegistry();
    const c = r.counter('things_total', 'Things.', ['kind']);
    c.inc({ kind: 'a' });
    c.inc({ kind: 'a' }, 2);
    c.inc({ kind: 'q"uote\\' });
    r.gauge('level', 'Level.').set({}, 7);
    const h = r.histogram('latency_seconds', 'Latency.', ['op'], [0.1, 1]);
    h.observe({ op: 'get' }, 0.05);
    h.observe({ op: 'get' }, 0.5);
    h.observe({ op: 'get' }, 5);
    const text = r.render();
    assert.match(text, /^# HELP things_total Things\.\n# TYPE things_total counter\n/);
    const s = parsePrometheus(text);
    assert.equal(s.get('things_total{kind="a"}'), 3);
    assert.equal(s.get('things_total{kind="q\\"uote\\\\"}'), 1);
    assert.equal(s.get('level'), 7);
    assert.equal(s.get('latency_seconds_bucket{op="get",le="0.1"}'), 1);
    assert.equal(s.get('latency_seconds_bucket{op="get",le="1"}'), 2);
    assert.equal(s.get('latency_seconds_bucket{op="get",le="+Inf"}'), 3);
    assert.equal(s.get('latency_seconds_sum{op="get"}'), 5.55);
    assert.equal(s.get('latency_seconds_count{op="get"}'), 3);
  });

  it('keeps series in creation order; a removed series comes back at the end', () => {
    const r = new MetricsRegistry();
    const g = r.gauge('g', 'G.', ['a', 'b']);
    g.set({ a: 'x', b: '1' }, 1);
    g.set({ a: 'y', b: '1' }, 2);
    g.set({ a: 'x', b: '2' }, 3);
    g.remove({ a: 'x', b: '1' });
    g.remove({ a: 'nope', b: '1' });
    g.set({ a: 'x', b: '1' }, 4);
    g.set({ a: 'y', b: '1' }, 5);
    assert.equal(
      r.render(),
      '# HELP g G.\n# TYPE g gauge\ng{a="y",b="1"} 5\ng{a="x",b="2"} 3\ng{a="x",b="1"} 4\n',
    );
    // A missing label is the empty value, and labels not declared are ignored.
    g.set({ a: 'z', c: 'ignored' } as never, 6);
    assert.equal(g.get({ a: 'z', b: '' }), 6);
  });

  it('keeps label sets apart whose values would read the same if joined (one series per label text)', () => {
    const r = new MetricsRegistry();
    const g = r.gauge('g', 'G.', ['a', 'b']);
    g.set({ a: 'x",b="y', b: '' }, 1);
    g.set({ a: 'x', b: 'y' }, 2);
    g.set({ a: 'x\\', b: 'y' }, 3);
    g.set({ a: 'x\\\\', b: 'y' }, 4);
    assert.equal(g.get({ a: 'x",b="y', b: '' }), 1);
    assert.equal(g.get({ a: 'x', b: 'y' }), 2);
    assert.equal(g.get({ a: 'x\\', b: 'y' }), 3);
    assert.equal(g.get({ a: 'x\\\\', b: 'y' }), 4);
    g.remove({ a: 'x', b: 'y' });
    assert.equal(g.get({ a: 'x",b="y', b: '' }), 1);
    assert.equal(parsePrometheus(r.render()).size, 3);
  });

  it('finds every series through writes and removals in any order (against a plain map)', () => {
    const r = new MetricsRegistry();
    const g = r.gauge('g', 'G.', ['a', 'b', 'c', 'd']);
    const expected = new Map<string, number>();
    // A fixed pseudo-random sequence over few values, so that series share prefixes, part and come back.
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 8) % n;
    for (let step = 0; step < 4000; step++) {
      const labels = { a: `a${next(3)}`, b: `b${next(2)}`, c: `c${next(3)}`, d: `d${next(2)}` };
      const key = JSON.stringify(labels);
      if (next(3) === 0) {
        g.remove(labels);
        expected.delete(key);
      } else {
        g.set(labels, step);
        expected.set(key, step);
      }
      if (step % 97 === 0) {
        for (const [k, v] of expected) assert.equal(g.get(JSON.parse(k)), v, k);
        assert.equal(parsePrometheus(r.render()).size, expected.size);
      }
    }
    for (const [k, v] of expected) assert.equal(g.get(JSON.parse(k)), v, k);
    assert.equal(g.get({ a: 'nope', b: 'b0', c: 'c0', d: 'd0' }), 0);
    assert.equal(parsePrometheus(r.render()).size, expected.size);
  });

  it('binds series with with(): same series as the label API, and a removed gauge series returns on write', () => {
    const r = new MetricsRegistry();
    const c = r.counter('c_total', 'C.', ['k']);
    const child = c.with({ k: 'v' });
    child.inc();
    c.inc({ k: 'v' }, 2);
    assert.equal(child.get(), 3);
    const h = r.histogram('h', 'H.', ['k'], [1]);
    const hc = h.with({ k: 'v' });
    // As with the label API, a series exists once written to, not once bound.
    assert.equal(hc.count(), 0);
    assert.doesNotMatch(r.render(), /^h_/m);
    hc.observe(0.5);
    h.observe({ k: 'v' }, 2);
    assert.equal(h.count({ k: 'v' }), 2);
    const g = r.gauge('g', 'G.', ['k']);
    const gc = g.with({ k: 'v' });
    gc.set(7);
    g.remove({ k: 'v' });
    assert.doesNotMatch(r.render(), /^g\{/m);
    gc.inc();
    assert.equal(g.get({ k: 'v' }), 1);
    assert.match(r.render(), /^g\{k="v"\} 1$/m);
  });

  it('returns the same metric for the same name and refuses a type clash', () => {
    const r = new MetricsRegistry();
    assert.equal(r.counter('x', 'X'), r.counter('x', 'X'));
    assert.throws(() => r.gauge('x', 'X'), /already registered as a counter/);
  });

  it('reads gaugeFunc and counterFunc series when rendered, labels in the order given', () => {
    const r = new MetricsRegistry();
    let size = 1;
    r.gaugeFunc('cache_objects', 'Objects.', () => [[{ resource: 'secrets', state: 'Ready' }, size]]);
    r.counterFunc('events_total', 'Events.', () => [
      [{ resource: 'a' }, 3],
      [{ resource: 'b"\\' }, 4],
    ]);
    size = 5;
    assert.equal(
      r.render(),
      '# HELP cache_objects Objects.\n# TYPE cache_objects gauge\ncache_objects{resource="secrets",state="Ready"} 5\n' +
        '# HELP events_total Events.\n# TYPE events_total counter\nevents_total{resource="a"} 3\n' +
        'events_total{resource="b\\"\\\\"} 4\n',
    );
    // A function-read metric has one owner: registering the name again, as any type, is refused.
    assert.throws(() => r.gaugeFunc('cache_objects', 'Again.', () => []), /already registered as a gauge/);
    assert.throws(() => r.counter('events_total', 'X'), /already registered as a counter/);
  });

  it('scrapes its own metrics, then each collector once, however often it is added', async () => {
    const r = new MetricsRegistry();
    r.counter('own_total', 'Own.').inc();
    let calls = 0;
    const collector = () => Promise.resolve(`# TYPE other gauge\nother ${++calls}`);
    r.addCollector('other', collector);
    r.addCollector('other', collector);
    assert.equal(
      await r.scrape(),
      '# HELP own_total Own.\n# TYPE own_total counter\nown_total 1\n# TYPE other gauge\nother 1\n',
    );
    assert.equal(calls, 1);
    // render() stays the registry's own metrics, synchronously.
    assert.doesNotMatch(r.render(), /other/);
  });
});
