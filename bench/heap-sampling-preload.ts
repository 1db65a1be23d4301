import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

/**
 * Preloaded into a process (`--import=<repo>/bench/heap-sampling-preload.ts`, e.g. through bench:scale's
 * `--controller-node-args=`): V8's sampling heap profiler for the process's whole life, its profile written to
 * $HEAP_SAMPLE_OUT every 5 s and at exit. `npm run bench:heap-sampling-report` reads it.
 *
 * HEAP_SAMPLE_MODE=survivors (the default) drops the samples of objects a scavenge collected and keeps those a
 * mark-compact collected: what is left was promoted into the old generation (or is still alive), which is
 * what docs/adr/1225 looks for. HEAP_SAMPLE_MODE=all keeps every sampled allocation.
 * HEAP_SAMPLE_INTERVAL: mean bytes between samples (16384).
 */

const out = process.env.HEAP_SAMPLE_OUT;
if (out) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.HEAP_SAMPLE_INTERVAL ?? 16384),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.HEAP_SAMPLE_MODE === 'all',
  });
  // The inspector session of the main thread answers synchronously, so this also works in an exit handler.
  const write = () =>
    session.post('HeapProfiler.getSamplingProfile', (err, result) => {
      if (!err) writeFileSync(out, JSON.stringify(result.profile));
    });
  setInterval(write, 5000).unref();
  process.on('exit', write);
}
