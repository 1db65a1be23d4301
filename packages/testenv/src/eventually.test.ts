import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from './eventually.ts';

describe('eventually', () => {
  it('polls until the probe gives a value, passing over undefined and false, and returns it', async () => {
    let calls = 0;
    const answers = [undefined, false, { ready: true }];
    assert.deepEqual(await eventually(async () => answers[calls++], 'an answer', 1000, 1), { ready: true });
    assert.equal(calls, 3);
    assert.equal(await eventually(() => calls > 0, 'a predicate', 1000, 1), true);
    // A falsy value other than false and undefined is a value.
    assert.equal(await eventually(() => 0, 'zero', 1000, 1), 0);
  });

  it('fails after the timeout, naming what it waited for and, when asked, the last state', async () => {
    await assert.rejects(
      eventually(() => false, 'Godot', 30, 5),
      {
        message: 'timed out after 30 ms waiting for Godot',
      },
    );
    await assert.rejects(
      eventually(
        () => undefined,
        'Godot',
        30,
        5,
        () => 'still on the road',
      ),
      { message: 'timed out after 30 ms waiting for Godot: still on the road' },
    );
  });
});
