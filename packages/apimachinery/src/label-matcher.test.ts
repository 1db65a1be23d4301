import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileLabelRequirements } from './label-matcher.ts';
import { parseLabelSelector, requirementsMatch } from './labels.ts';

/**
 * The folded matcher against the requirements matched one by one (upstream's semantics): the same answer for
 * random selectors over a few keys and values, integers for the bounds included, on random label sets.
 */

/** A small deterministic generator (mulberry32), so that a failure names a seed to replay. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ['a', 'b', 'c', 'example.com/d'];
const VALUES = ['x', 'y', 'z', '1', '5', '10', ''];
/** Values objects may carry (a selector cannot name '-3', a label may hold what a bound compares). */
const LABEL_VALUES = [...VALUES, '-3', '9223372036854775808'];
const INTS = ['0', '1', '4', '9'];

function randomSelector(next: () => number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  const terms: string[] = [];
  const count = 1 + Math.floor(next() * 14);
  for (let i = 0; i < count; i++) {
    const key = pick(KEYS);
    const values = () =>
      [
        ...new Set(Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(VALUES).replace(/^$/, 'x'))),
      ].join(',');
    switch (Math.floor(next() * 9)) {
      case 0:
        terms.push(`${key} in (${values()})`);
        break;
      case 1:
        terms.push(`${key} notin (${values()})`);
        break;
      case 2:
        terms.push(`${key}=${pick(VALUES)}`);
        break;
      case 3:
        terms.push(`${key}!=${pick(VALUES)}`);
        break;
      case 4:
        terms.push(key);
        break;
      case 5:
        terms.push(`!${key}`);
        break;
      case 6:
        terms.push(`${key}>${pick(INTS)}`);
        break;
      case 7:
        terms.push(`${key}<${pick(INTS)}`);
        break;
      default:
        terms.push(`${key}==${pick(VALUES)}`);
    }
  }
  return terms.join(',');
}

function randomLabels(next: () => number): Record<string, string> | undefined {
  if (next() < 0.05) return undefined;
  const labels: Record<string, string> = {};
  for (const key of KEYS)
    if (next() < 0.6) labels[key] = LABEL_VALUES[Math.floor(next() * LABEL_VALUES.length)];
  if (next() < 0.2) labels.other = 'x';
  return labels;
}

describe('compileLabelRequirements', () => {
  it('answers as the requirements one by one, on 20,000 random selectors and label sets', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const next = random(seed);
      const selector = parseLabelSelector(randomSelector(next));
      const matcher = compileLabelRequirements(selector.requirements);
      for (let i = 0; i < 10; i++) {
        const labels = randomLabels(next);
        assert.equal(
          matcher(labels),
          requirementsMatch(selector.requirements, labels),
          `seed ${seed}: ${selector.toString()} on ${JSON.stringify(labels)}`,
        );
      }
    }
  });

  it('is what a selector of more than eight requirements matches with', () => {
    const selector = parseLabelSelector(
      Array.from({ length: 2000 }, (_, i) => `!k${i}`).join(',') + ',tier in (web,db),tier!=db',
    );
    assert.equal(selector.matches({ tier: 'web' }), true);
    assert.equal(selector.matches({ tier: 'db' }), false);
    assert.equal(selector.matches({ tier: 'web', k1999: '' }), false);
    assert.equal(selector.matches({}), false);
    assert.equal(selector.matches(undefined), false);
  });
});
