import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `probe` every `intervalMs` until it gives a value (anything but undefined or false) and returns that
 * value; after `timeoutMs` it fails, naming `what` it waited for. The one poll loop of the tests: a
 * predicate (`() => informer.hasSynced()`) and a probe that fetches something (`async () => ready(await
 * get()) ? cert : undefined`) both fit. `describe`, when given, adds what the state was at the timeout.
 */
export async function eventually<T>(
  probe: () => T | false | undefined | Promise<T | false | undefined>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 10,
  describe?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${describe ? `: ${describe()}` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}
