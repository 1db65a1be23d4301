import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MetricsRegistry } from './metrics.ts';
import { startProbeServer } from './probes.ts';

/**
 * The probes server (/healthz, /readyz, /metrics) is unauthenticated and often bound on every interface for
 * Prometheus: pipelined requests from one connection run one at a time, so a client that sends thousands in
 * one packet and reads nothing cannot have the checks (or the scrapes) all run together and their answers
 * buffered.
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
});
