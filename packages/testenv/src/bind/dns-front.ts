/**
 * A DNS front for a test server (e.g. bind.ts's) on its own loopback port, to see and shape what reaches
 * it: TCP is relayed as it is; each UDP message is relayed (`forward`), answered with an empty truncated reply
 * (`truncate`, the TC bit: the client must ask again over TCP), or dropped (`drop`: the client times out).
 * It counts UDP messages and TCP connections.
 */

import { createSocket, type Socket } from 'node:dgram';
import { type AddressInfo, connect, createServer, type Server, type Socket as NetSocket } from 'node:net';

export type UdpMode = 'forward' | 'truncate' | 'drop';

export interface DnsFront {
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** What happens to UDP messages; may be changed at any time. */
  mode: UdpMode;
  readonly udpMessages: number;
  readonly tcpConnections: number;
  close(): Promise<void>;
}

export async function startDnsFront(upstreamPort: number, mode: UdpMode = 'forward'): Promise<DnsFront> {
  let udpMessages = 0;
  let tcpConnections = 0;
  const open = new Set<NetSocket>();
  const tcp: Server = createServer((client) => {
    tcpConnections++;
    const upstream = connect(upstreamPort, '127.0.0.1');
    open.add(client).add(upstream);
    client.on('close', () => open.delete(client));
    upstream.on('close', () => open.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const port = (tcp.address() as AddressInfo).port;
  const front = {
    port,
    address: `127.0.0.1:${port}`,
    mode,
    get udpMessages() {
      return udpMessages;
    },
    get tcpConnections() {
      return tcpConnections;
    },
    async close() {
      udp.close();
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
  const udp: Socket = createSocket('udp4', (message, from) => {
    udpMessages++;
    if (front.mode === 'drop' || message.length < 12) return;
    if (front.mode === 'truncate') {
      const reply = Buffer.alloc(12);
      message.copy(reply, 0, 0, 2);
      // QR, the request's opcode, TC; no records.
      reply.writeUInt16BE(0x8000 | (message.readUInt16BE(2) & 0x7800) | 0x0200, 2);
      udp.send(reply, from.port, from.address);
      return;
    }
    const relay = createSocket('udp4', (answer) => {
      relay.close();
      udp.send(answer, from.port, from.address);
    });
    relay.send(message, upstreamPort, '127.0.0.1');
  });
  await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', resolve));
  return front;
}
