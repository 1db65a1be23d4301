/**
 * One scrape for every /metrics request of the moment. The exposition of many Certificates is megabytes, and
 * the probes server answers anyone who can reach it: each request rendering and encoding its own copy let a
 * client that opened connections, asked and never read hold a copy per connection (40 such requests held
 * 160 MB of a 4 MB exposition). Requests that arrive while a scrape runs, or within `reuseMs` of its end,
 * get its bytes, encoded once: a Buffer written to many sockets is referenced by each, not copied. Prometheus
 * scrapes every 15 s or more, so what it reads is never older than that window.
 */
export function sharedScrape(scrape: () => Promise<string>, reuseMs = 1000): () => Promise<Buffer> {
  let current: Promise<Buffer> | undefined;
  let finishedAt = 0;
  let running = false;
  return () => {
    if (current && (running || performance.now() - finishedAt < reuseMs)) return current;
    running = true;
    const started = scrape().then(
      (text) => Buffer.from(text),
      (err: unknown) => {
        // A failed scrape is not kept: the next request tries again.
        current = undefined;
        throw err;
      },
    );
    current = started;
    void started.then(
      () => {
        running = false;
        finishedAt = performance.now();
      },
      () => {
        running = false;
      },
    );
    return started;
  };
}
