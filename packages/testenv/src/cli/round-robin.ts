import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * One address in front of several API servers, as a TCP load balancer would put replicas: each connection goes
 * to the next backend in turn, TLS passing through untouched (clients verify the replicas' shared certificate).
 */
export interface RoundRobin {
  port: number;
  /** Connections sent to each backend so far, in the order the backends were given. */
  connections: number[];
  close(): Promise<void>;
}

export async function startRoundRobin(backendPorts: number[]): Promise<RoundRobin> {
  const connections = backendPorts.map(() => 0);
  const open = new Set<Socket>();
  let next = 0;
  const server: Server = createServer((client) => {
    const index = next++ % backendPorts.length;
    connections[index]++;
    const backend = connect(backendPorts[index], '127.0.0.1');
    for (const socket of [client, backend]) {
      open.add(socket);
      socket.on('error', () => {
        client.destroy();
        backend.destroy();
      });
      socket.on('close', () => open.delete(socket));
    }
    client.pipe(backend).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    connections,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
