import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyGenerations } from './key-generations.ts';

/** A KeyGenerations whose announcements are recorded; `next()` resolves with the next group announced. */
function recorded(options: { groupWindowMs?: number; groupSize?: number } = {}) {
  const announced: string[][] = [];
  let waiter: (() => void) | undefined;
  let current: string[] = [];
  let flushScheduled = false;
  const keys = new KeyGenerations({
    ...options,
    ready: (certificate) => {
      // Announcements of one group arrive in one synchronous run: close the group on the next tick.
      current.push(certificate);
      if (flushScheduled) return;
      flushScheduled = true;
      process.nextTick(() => {
        announced.push(current);
        current = [];
        flushScheduled = false;
        waiter?.();
      });
    },
  });
  const next = () =>
    new Promise<string[]>((resolve) => {
      waiter = () => {
        waiter = undefined;
        resolve(announced.shift() as string[]);
      };
    });
  return { keys, announced, next };
}

describe('KeyGenerations', () => {
  it('starts a key on the first ask, announces it when ready and hands it over once', async () => {
    const { keys, next } = recorded();
    assert.equal(keys.take('ns/a', { algorithm: 'ECDSA' }), undefined);
    assert.equal(keys.take('ns/a', { algorithm: 'ECDSA' }), undefined, 'still being generated');
    assert.deepEqual(await next(), ['ns/a']);
    const key = keys.take('ns/a', { algorithm: 'ECDSA' });
    assert.equal(key?.asymmetricKeyType, 'ec');
    assert.equal(key?.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(keys.take('ns/a', { algorithm: 'ECDSA' }), undefined, 'a second ask starts a new key');
    assert.deepEqual(await next(), ['ns/a']);
    assert.notEqual(keys.take('ns/a', { algorithm: 'ECDSA' }), key);
  });

  it('drops a key made for a spec that has since changed', async () => {
    const { keys, next } = recorded();
    assert.equal(keys.take('ns/a', { algorithm: 'ECDSA' }), undefined);
    assert.equal(keys.take('ns/a', { algorithm: 'Ed25519' }), undefined);
    const announced = [...(await next())];
    while (keys.pending > 0) announced.push(...(await next()));
    // Only the Ed25519 key is announced and handed over.
    assert.deepEqual(announced, ['ns/a']);
    assert.equal(keys.take('ns/a', { algorithm: 'Ed25519' })?.asymmetricKeyType, 'ed25519');
  });

  it('announces nothing for a forgotten Certificate', async () => {
    const { keys, announced } = recorded();
    assert.equal(keys.take('ns/gone', { algorithm: 'ECDSA' }), undefined);
    assert.equal(keys.take('ns/kept', { algorithm: 'RSA', size: 2048 }), undefined);
    keys.forget('ns/gone');
    while (keys.pending > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(announced.flat(), ['ns/kept']);
  });

  it('throws a failed generation once, then tries again', async () => {
    const { keys, next } = recorded();
    assert.equal(keys.take('ns/a', { algorithm: 'RSA', size: 1024 }), undefined);
    assert.deepEqual(await next(), ['ns/a']);
    assert.throws(() => keys.take('ns/a', { algorithm: 'RSA', size: 1024 }), /weak rsa key size/);
    assert.equal(keys.take('ns/a', { algorithm: 'RSA', size: 1024 }), undefined, 'generation started again');
  });

  it('announces keys in groups while more are coming, and the last one at once', async () => {
    const { keys, announced } = recorded({ groupWindowMs: 10_000, groupSize: 4 });
    const names = Array.from({ length: 10 }, (_, i) => `ns/c${i}`);
    for (const name of names) assert.equal(keys.take(name, { algorithm: 'ECDSA' }), undefined);
    const started = Date.now();
    while (announced.flat().length < names.length) await new Promise((resolve) => setTimeout(resolve, 5));
    // Groups of 4 fill up long before the 10 s window closes; the tail goes when nothing more is coming.
    assert.ok(Date.now() - started < 5000, 'no group waited for its window');
    assert.deepEqual(announced.flat().sort(), [...names].sort());
    assert.ok(announced.length < names.length, `grouped: ${JSON.stringify(announced)}`);
    for (const group of announced) assert.ok(group.length <= 4);
    for (const name of names) assert.equal(keys.take(name, { algorithm: 'ECDSA' })?.asymmetricKeyType, 'ec');
  });

  it('closes a group after its window while more keys are still coming', async () => {
    // A short window: an RSA 4096 key now and then comes in well under 50 ms, which closed the group with both.
    const { keys, next } = recorded({ groupWindowMs: 20, groupSize: 1000 });
    assert.equal(keys.take('ns/fast', { algorithm: 'ECDSA' }), undefined);
    assert.equal(keys.take('ns/slow', { algorithm: 'RSA', size: 4096 }), undefined);
    const started = Date.now();
    assert.deepEqual(await next(), ['ns/fast']);
    const waited = Date.now() - started;
    assert.ok(waited >= 15, `the ECDSA key waited for its window (${waited} ms)`);
    assert.ok(keys.pending === 1, 'the RSA key was still being made');
    assert.deepEqual(await next(), ['ns/slow']);
  });
});
