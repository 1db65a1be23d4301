import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MetricsRegistry } from './metrics.ts';
import { startProbeServer } from './probes.ts';

/**
 * The probes server (/healthz, /readyz, /metrics) is unauthenticated and often bound on every interface for
 * Prometheus, and a scrape of many Certificates is megabytes:
 * - pipelined requests from one connection run one at a time, so a client that sends thousands in one packet
 *   and reads nothing cannot have the checks (or the scrapes) all run together and their answers buffered;
 * - scrapes asked for at once share one exposition, encoded once, so connections that ask and never read
 *   hold one copy between them, and such a connection is closed once it has taken nothing for a while.
 */

describe('probes server', () => {
  it('runs pipelined requests of a connection one at a time, past 64 waiting answering 429', async () => {
    let running = 0;
    let most = 0;
    const slow = async () => {
      running++;
      most = Math.max(most, running);
      await sleep(5);
      running--;
    };
    const server = await startProbeServer({
      address: { host: '127.0.0.1', port: 0 },
      metrics: new MetricsRegistry(),
      healthz: new Map([['slow', slow]]),
      readyz: new Map(),
    });
    try {
      const url = new URL(server.url);
      const socket = connect(Number(url.port), url.hostname);
      await once(socket, 'connect');
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1000));
      const codes = () => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      while (codes().length < 1000) await sleep(20);
      // Every check used to run at once (1000 together).
      assert.equal(most, 1);
      const answered = codes();
      assert.deepEqual(answered.slice(0, 65), Array(65).fill('200'));
      assert.ok(answered.every((code) => code === '200' || code === '429'));
      assert.ok(answered.includes('429'), 'one read holds more than 65 of these requests');
      socket.destroy();
    } finally {
      await server.close();
    }
  });

  it('shares one scrape between the scrapers of the moment and closes those that stop reading', async () => {
    let scrapes = 0;
    const metrics = new MetricsRegistry();
    // 12 MB of exposition, as some 15,000 Certificates make: more than the kernel's buffers take.
    const big = `${'# HELP big x\n# TYPE big gauge\n'}${Array.from({ length: 120_000 }, (_, i) => `big{n="${String(i).padStart(80, '0')}"} 1`).join('\n')}\n`;
    metrics.addCollector('big', async () => {
      scrapes++;
      await sleep(50);
      return big;
    });
    const server = await startProbeServer({
      address: { host: '127.0.0.1', port: 0 },
      metrics,
      healthz: new Map(),
      readyz: new Map(),
      stalledWriteTimeoutMs: 1500,
    });
    const sockets: Socket[] = [];
    try {
      const url = new URL(server.url);
      const external = process.memoryUsage().arrayBuffers;
      for (let i = 0; i < 40; i++) {
        const socket = connect(Number(url.port), url.hostname);
        await once(socket, 'connect');
        socket.pause();
        socket.on('error', () => {});
        socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
        sockets.push(socket);
      }
      await sleep(300);
      // Each connection used to get its own scrape and its own 12 MB buffer (480 MB here).
      assert.ok(scrapes <= 2, `${scrapes} scrapes for 40 requests at once`);
      const held = process.memoryUsage().arrayBuffers - external;
      assert.ok(held < 60e6, `${Math.round(held / 1e6)} MB held for 40 unread scrapes`);
      // Nothing read for longer than the stall timeout: each answer was cut off and its connection closed,
      // which the client sees once it reads what its buffers hold.
      await sleep(2500);
      const received = await Promise.all(
        sockets.map(async (socket) => {
          let bytes = 0;
          socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
          const closed = once(socket, 'close');
          socket.resume();
          await Promise.race([closed, sleep(5000).then(() => assert.fail('an unread scrape was kept open'))]);
          return bytes;
        }),
      );
      for (const bytes of received) assert.ok(bytes < big.length, `${bytes} bytes of ${big.length} arrived`);
      // A scraper that reads gets the whole exposition.
      const res = await fetch(`${server.url}/metrics`);
      assert.equal(res.status, 200);
      assert.equal((await res.text()).length >= big.length, true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });
  it('holds at most maxConnections: idle ones are closed, oldest first, and a probe still gets through', async () => {
    const server = await startProbeServer({
      address: { host: '127.0.0.1', port: 0 },
      metrics: new MetricsRegistry(),
      healthz: new Map(),
      readyz: new Map(),
      maxConnections: 50,
      headersTimeoutMs: 1_000,
    });
    try {
      const url = new URL(server.url);
      // 200 connections that send nothing: with Node's defaults each held a descriptor for 60 s, without bound.
      const idle: Socket[] = [];
      const closed = new Set<Socket>();
      for (let i = 0; i < 200; i++) {
        const socket = connect(Number(url.port), url.hostname);
        socket.on('error', () => {});
        socket.on('close', () => closed.add(socket));
        // Read, so that the server's close is seen.
        socket.resume();
        await once(socket, 'connect');
        idle.push(socket);
      }
      await sleep(100);
      // The server closed the oldest 150 to stay at 50.
      assert.equal(closed.size, 150);
      assert.ok(idle.slice(0, 150).every((socket) => closed.has(socket)));
      const res = await fetch(`${server.url}/healthz`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok');
      // Those that never send anything are closed after the headers timeout (1 s here, checked every second).
      await sleep(3_000);
      assert.equal(closed.size, 200);
    } finally {
      await server.close();
    }
  });
});
