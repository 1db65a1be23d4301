/**
 * Preloaded into a process the bench starts through the CLI (`node --expose-gc --import bench/heap-reporter.ts
 * packages/cli/src/main.ts controller …`, with an IPC channel), so that a bench can ask the real command for its
 * live heap without a probe of its own: on `{ cmd: 'heap' }` it collects garbage until the heap settles and
 * answers with process.memoryUsage(). The channel is unreferenced, so it never keeps the process alive.
 */

type Gc = () => void;

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
  process.on('message', (msg: { id?: number; cmd?: string }) => {
    if (msg.cmd !== 'heap') return;
    void settledUsage().then(
      (usage) => process.send!({ id: msg.id, usage }),
      (err: Error) => process.send!({ id: msg.id, error: err.message }),
    );
  });
  process.channel?.unref();
}
