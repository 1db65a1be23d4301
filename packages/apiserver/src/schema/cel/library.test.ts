import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubernetesEnvironment, withPortableHas } from './library.ts';

/** Kubernetes' CEL extension libraries as the environment gives them to rules: each expression must hold. */

const env = kubernetesEnvironment().registerVariable('self', 'map<string, dyn>');

function holds(expression: string, self: Record<string, unknown> = {}): void {
  assert.equal(env.evaluate(withPortableHas(expression), { self }), true, expression);
}

function fails(expression: string, message: RegExp): void {
  assert.throws(() => env.evaluate(withPortableHas(expression), { self: {} }), message, expression);
}

describe('Kubernetes CEL libraries', () => {
  it('lists: isSorted, sum, min, max, indexOf, lastIndexOf', () => {
    for (const e of [
      '[1, 2, 3].isSorted() && !["b", "a"].isSorted()',
      '[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0',
      '[3, 1, 2].min() == 1 && ["b", "c", "a"].max() == "c"',
      '["a", "b", "a"].indexOf("a") == 0 && ["a", "b", "a"].lastIndexOf("a") == 2 && [1].indexOf(2) == -1',
    ])
      holds(e);
    fails('[].min()', /min of empty list/);
  });

  it('lists extension: slice, flatten, distinct, reverse, sort, first, last, lists.range', () => {
    for (const e of [
      '[1, 2, 3, 4].slice(1, 3) == [2, 3] && [1].slice(1, 1) == []',
      '[[1], [2, [3]]].flatten() == [1, 2, [3]] && [[1], [2, [3]]].flatten(2) == [1, 2, 3]',
      '[1, 2, 1, 3].distinct() == [1, 2, 3] && [1, 2].reverse() == [2, 1] && ["b", "a"].sort() == ["a", "b"]',
      '[1, 2].first().value() == 1 && [1, 2].last().value() == 2 && !dyn([]).first().hasValue()',
      'lists.range(3) == [0, 1, 2] && lists.range(0) == []',
    ])
      holds(e);
    fails('[1].slice(0, 2)', /cannot slice\(0, 2\), list is length 1/);
  });

  it('regex: find and findAll', () => {
    holds('"ab12cd345".find("[0-9]+") == "12" && "abc".find("[0-9]+") == ""');
    holds('"ab12cd345".findAll("[0-9]+") == ["12", "345"] && "a1b2c3".findAll("[0-9]", 2) == ["1", "2"]');
  });

  it('strings: charAt, replace, reverse, format, strings.quote and the ones the library has', () => {
    for (const e of [
      '"abc".charAt(1) == "b" && "abc".charAt(3) == ""',
      '"aXa".replace("a", "b") == "bXb" && "aXa".replace("a", "b", 1) == "bXa"',
      '"abc".reverse() == "cba"',
      '"%s has %d items, %.2f%%".format(["cart", 3, 12.5]) == "cart has 3 items, 12.50%"',
      'strings.quote("a\\nb") == "\\"a\\\\nb\\""',
      '"a,b,c".split(",", 2) == ["a", "b,c"] && ["a", "b"].join("-") == "a-b"',
      '"AbC".lowerAscii() == "abc" && "  x ".trim() == "x" && "abc".substring(1, 2) == "b"',
    ])
      holds(e);
    fails('"abc".charAt(4)', /index out of range: 4/);
  });

  it('quantity', () => {
    for (const e of [
      'quantity("1Gi").isGreaterThan(quantity("1Mi")) && quantity("1Mi").isLessThan(quantity("1Gi"))',
      'isQuantity("1Gi") && isQuantity("100m") && isQuantity("1e3") && !isQuantity("1GB")',
      'quantity("1k") == quantity("1000") && quantity("1k") != quantity("1001")',
      'quantity("0.1").add(quantity("100m")).asApproximateFloat() == 0.2',
      'quantity("1.5").isInteger() == false && quantity("2k").asInteger() == 2000',
      'quantity("-1").sign() == -1 && quantity("1e3").compareTo(quantity("1k")) == 0',
      'quantity("1").sub(1).sign() == 0 && quantity("1").add(2) == quantity("3")',
    ])
      holds(e);
    fails('quantity("1GB")', /quantities must match the regular expression/);
    fails('quantity("1.5").asInteger()', /cannot convert value to integer/);
  });

  it('url', () => {
    for (const e of [
      'url("https://a.b:8443/c?x=1&x=2").getHost() == "a.b:8443" && url("https://a.b:8443/c").getPort() == "8443"',
      'url("https://[::1]:80/").getHostname() == "::1" && url("https://a.b/c").getScheme() == "https"',
      'url("https://a.b/c%20d").getEscapedPath() == "/c%20d"',
      'url("https://a.b/?x=1&x=2").getQuery()["x"] == ["1", "2"]',
      'url("/path").getScheme() == "" && url("/path").getHost() == ""',
      'isURL("https://x") && isURL("/p") && !isURL("x y") && !isURL("relative/path")',
    ])
      holds(e);
    fails('url("x y")', /URL parse error during conversion from string: x y/);
  });

  it('ip and cidr', () => {
    for (const e of [
      'ip("10.0.0.1").family() == 4 && ip("::1").family() == 6 && ip("::1").isLoopback()',
      'ip("fe80::1").isLinkLocalUnicast() && ip("8.8.8.8").isGlobalUnicast() && ip("0.0.0.0").isUnspecified()',
      // As Go's netip: private addresses are global unicast too.
      'ip("224.0.0.1").isLinkLocalMulticast() && ip("10.0.0.1").isGlobalUnicast() && !ip("::1").isGlobalUnicast()',
      '!isIP("010.0.0.1") && !isIP("::ffff:1.2.3.4") && !isIP("fe80::1%eth0") && isIP("2001:db8::1")',
      'ip.isCanonical("2001:db8::1") && !ip.isCanonical("2001:DB8::1")',
      'string(ip("2001:db8:0::1")) == "2001:db8::1" && ip("10.0.0.1") == ip("10.0.0.1")',
      'cidr("10.0.0.0/8").containsIP(ip("10.1.1.1")) && !cidr("10.0.0.0/8").containsIP("11.1.1.1")',
      'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && !cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))',
      'string(cidr("10.1.2.3/8").masked()) == "10.0.0.0/8" && cidr("10.0.0.0/8").prefixLength() == 8',
      'cidr("2001:db8::/32").ip() == ip("2001:db8::") && isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0/33")',
      // The namespace constants do not get in the way of variables of the same name.
      '[1, 2].all(ip, ip > 0) && [1].exists(strings, strings == 1)',
    ])
      holds(e);
    fails('ip("1.2.3")', /IP Address parse error during conversion from string: 1.2.3/);
  });

  it('sets and math', () => {
    for (const e of [
      'sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2]) && sets.contains([1, 2], [])',
      'sets.equivalent([1, 2, 1], [2, 1]) && !sets.equivalent([1], [1, 2])',
      'sets.intersects(["a", "b"], ["b", "c"]) && !sets.intersects(["a"], [])',
      'math.greatest(1, 5, 3) == 5 && math.least([2.5, 1.5]) == 1.5 && math.greatest(7) == 7',
      'math.abs(-3) == 3 && math.sign(-2) == -1 && math.sign(0.5) == 1.0',
      'math.ceil(1.2) == 2.0 && math.floor(1.8) == 1.0 && math.round(-1.5) == -2.0 && math.trunc(-1.7) == -1.0',
      'math.isNaN(0.0 / 0.0) && math.isInf(1.0 / 0.0) && math.isFinite(1.0)',
    ])
      holds(e);
    fails('math.abs(-9223372036854775807 - 1)', /integer overflow/);
  });

  it('has() on any field selection, not only on chains from a variable', () => {
    holds('has(self.m[0].path) && !has(self.m[1].path) && !has(self.absent)', { m: [{ path: 'x' }, {}] });
    // has( inside string literals is text, not a call.
    assert.equal(withPortableHas('has(a.b) && "has(x)" == \'has(\''), 'k8s_has(a.b) && "has(x)" == \'has(\'');
  });

  it('regex functions run Go regexp (RE2) semantics, in linear time', () => {
    for (const e of [
      '"abc".matches("^a") && !"abc".matches("^b") && matches("abc", "c$")',
      // Go's FindAllString skips an empty match right after the previous one; matchAll would not.
      '"baaa".findAll("a*") == ["", "aaa"]',
      '"😀x".find("^.") == "😀"',
      // Exponential for a backtracking engine (the 40 a's would take hours); RE2 answers at once.
      `!"${'a'.repeat(40)}!".matches("^(a+)+$") && "${'a'.repeat(40)}!".find("(a+)+!") == "${'a'.repeat(40)}!"`,
      // A field named matches is not renamed: only a call is.
      'self.matches[0] == 1',
    ])
      holds(e, { matches: [1] });
    // RE2 refuses what it cannot run in linear time, with Go's error.
    fails('"aa".matches("(a)\\\\1")', /invalid escape sequence/);
    assert.equal(
      withPortableHas('s.matches(r) || matches(s, r) || s.k8s_matches(r) || "matches(" == x.amatches(y)'),
      's.k8s_matches(r) || k8s_matches(s, r) || s.k8s_matches(r) || "matches(" == x.amatches(y)',
    );
  });
});
