import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

/**
 * Preloaded into a process the bench starts through the CLI (`node --expose-gc --import bench/heap-reporter.ts
 * packages/cli/src/main.ts controller …`, with an IPC channel), so that a bench can ask the real command for its
 * live heap without a probe of its own: on `{ cmd: 'heap' }` it answers with process.memoryUsage() and V8's
 * heap spaces as they are, then with process.memoryUsage() once garbage collection has settled; on
 * `{ cmd: 'snapshot', file }` it writes a heap snapshot there (for Chrome DevTools' Memory tab). The channel is unreferenced, so it never keeps the process alive.
 */

type Gc = () => void;

interface HeapReport {
  before: NodeJS.MemoryUsage;
  /** Committed bytes per V8 heap space (new_space, old_space, code_space, …) before collecting. */
  spaces: Record<string, number>;
  after: NodeJS.MemoryUsage;
}

async function report(): Promise<HeapReport> {
  const before = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
  return { before, spaces, after: await settledUsage() };
}

async function settledUsage(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) throw new Error('heap-reporter needs --expose-gc');
  // Rounds with turns of the event loop between them, so that what finalizers and weak callbacks free is
  // collected too.
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage();
}

if (process.send) {
  process.on('message', (msg: { id?: number; cmd?: string; file?: string }) => {
    if (msg.cmd === 'snapshot') {
      process.send!({ id: msg.id, file: writeHeapSnapshot(msg.file) });
      return;
    }
    if (msg.cmd !== 'heap') return;
    void report().then(
      (heap) => process.send!({ id: msg.id, heap }),
      (err: Error) => process.send!({ id: msg.id, error: err.message }),
    );
  });
  process.channel?.unref();
}
