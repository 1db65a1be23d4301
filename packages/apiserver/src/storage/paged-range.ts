import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { KeyValue, Storage } from './types.ts';

/**
 * Reads a whole prefix as one consistent snapshot, in pages at a fixed revision, yielding to the event loop
 * between pages. A cache initialising over tens of thousands of objects must not stall the server: requests
 * keep being answered (with 429 where KEP-4568 says so) while it reads.
 */
export async function rangeAllPaged(
  storage: Storage,
  prefix: string,
  onPage: (kvs: KeyValue[]) => void,
  pageSize = 500,
): Promise<number> {
  let revision = 0;
  let startKey = prefix;
  for (;;) {
    const page = await storage.range(prefix, { revision, startKey, limit: pageSize });
    revision = page.revision;
    onPage(page.kvs);
    if (!page.more || page.kvs.length === 0) return revision;
    startKey = `${page.kvs[page.kvs.length - 1].key}\u0000`;
    await yieldToEventLoop();
  }
}
