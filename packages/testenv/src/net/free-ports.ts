import { createServer, type Server } from 'node:net';

/**
 * Free loopback TCP ports for the servers tests start (etcd, Pebble, BIND, the CLI…): the OS picks them. All
 * `n` are held open at once so that they differ; another process may still take one before the caller binds
 * it, which is rare enough here. UDP on the same number is practically always free too (BIND listens on both).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** One free loopback TCP port (see freePorts). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}
