/**
 * The SQLite writer's thread: carries out the requests of sqlite-writer-client.ts's ThreadWriter, one at a
 * time, in the order they came.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { SqliteWriter, toFailure, type WriterOptions } from './sqlite-writer.ts';
import type { ThreadMessage } from './sqlite-writer-client.ts';

const { path, options } = workerData as { path: string; options: WriterOptions };
const writer = new SqliteWriter(path, options);
const port = parentPort!;

port.on('message', (message: ThreadMessage) => {
  if (message.close) {
    writer.close();
    port.postMessage({ id: message.id, ok: true });
    port.close();
    return;
  }
  try {
    port.postMessage({ id: message.id, ok: true, value: writer.apply(message.request) });
  } catch (err) {
    port.postMessage({ id: message.id, ok: false, failure: toFailure(err) });
  }
});
