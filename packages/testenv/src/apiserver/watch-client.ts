import { Agent, request } from 'node:https';
import type { TestServer } from './test-server.ts';

/** Reads a watch stream line by line, for tests that check what a watcher sees and when. */
export interface WatchStream {
  status: number;
  events: any[];
  /** Resolves once `count` events arrived (or rejects after the timeout). */
  waitFor(count: number, timeoutMs?: number): Promise<any[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
  /** Stops reading: the server's writes back up, as with a client that hangs. */
  pause(): void;
}

export function openWatch(t: TestServer, path: string, accept = 'application/json'): Promise<WatchStream> {
  const agent = new Agent({ ca: t.caCertPem });
  return new Promise((resolve, reject) => {
    const req = request(
      `${t.url}${path}`,
      { headers: { Authorization: `Bearer ${t.token}`, Accept: accept }, agent },
      (res) => {
        const events: unknown[] = [];
        const waiters: { count: number; resolve: (e: unknown[]) => void }[] = [];
        let buffer = '';
        let endResolve: () => void = () => {};
        const ended = new Promise<void>((r) => {
          endResolve = r;
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl = buffer.indexOf('\n');
          while (nl >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim()) events.push(JSON.parse(line));
            nl = buffer.indexOf('\n');
          }
          for (const w of [...waiters]) {
            if (events.length >= w.count) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(events.slice(0, w.count));
            }
          }
        });
        res.on('end', endResolve);
        res.on('close', endResolve);
        res.on('error', endResolve);
        resolve({
          status: res.statusCode ?? 0,
          events,
          ended,
          waitFor(count, timeoutMs = 5000) {
            if (events.length >= count) return Promise.resolve(events.slice(0, count));
            return new Promise((ok, fail) => {
              const timer = setTimeout(
                () => fail(new Error(`timed out waiting for ${count} events; got ${JSON.stringify(events)}`)),
                timeoutMs,
              );
              waiters.push({
                count,
                resolve: (e) => {
                  clearTimeout(timer);
                  ok(e);
                },
              });
            });
          },
          pause() {
            res.pause();
          },
          close() {
            req.destroy();
            agent.destroy();
          },
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
