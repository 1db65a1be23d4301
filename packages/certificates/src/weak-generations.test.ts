import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WeakGenerations } from './weak-generations.ts';

describe('WeakGenerations', () => {
  it('remembers answers, undefined ones too, for the objects asked about lately', () => {
    const answers = new WeakGenerations<object, string | undefined>(4);
    const a = {};
    const b = {};
    answers.set(a, 'a');
    answers.set(b, undefined);
    assert.equal(answers.get(a), 'a');
    assert.ok(answers.has(b));
    assert.equal(answers.get(b), undefined);
    assert.ok(!answers.has({}));
  });

  it('forgets what was not asked about for two generations, keeps what was asked again', () => {
    const answers = new WeakGenerations<object, number>(4);
    const keys = Array.from({ length: 6 }, () => ({}));
    answers.set(keys[0], 0);
    answers.set(keys[1], 1);
    // keys[0] and keys[1] fill the first generation; the next two start the second.
    answers.set(keys[2], 2);
    answers.set(keys[3], 3);
    // Asked again from the older generation: moved to the current one, which is full, so a new one starts.
    assert.equal(answers.get(keys[0]), 0);
    answers.set(keys[4], 4);
    answers.set(keys[5], 5);
    assert.equal(answers.get(keys[0]), 0);
    assert.ok(!answers.has(keys[1]), 'not asked since two generations ago');
    assert.ok(!answers.has(keys[2]));
    assert.equal(answers.get(keys[5]), 5);
  });

  it('holds at most the capacity in its two generations, however many objects it is asked about', () => {
    const answers = new WeakGenerations<object, number>(100);
    const keys = Array.from({ length: 1000 }, () => ({}));
    keys.forEach((key, i) => answers.set(key, i));
    const remembered = keys.filter((key) => answers.has(key)).length;
    assert.ok(remembered <= 100 && remembered >= 50, `${remembered} remembered`);
    assert.ok(answers.has(keys[999]));
    assert.ok(!answers.has(keys[0]));
  });
});
