/**
 * One DNS question to a list of servers, as cert-manager's `DNSQuery` asks it (pkg/issuer/acme/dns/util/wait.go):
 * recursion desired, EDNS0 with a 4096-byte UDP size, UDP first and TCP when the UDP answer is truncated or
 * times out, DoH for https:// servers; servers are tried in order until one answers.
 *
 * Why not node:dns (docs/adr/1002-dns01-rfc2136-own-wire-format.md): the zone walk needs the RCODE, the owner
 * names and TTLs of the answer and whether it holds a CNAME, which `Resolver.resolveSoa` hides, and DoH servers
 * are not something c-ares speaks. node:dns still supplies the system resolvers (nameserver.ts) and resolves
 * nameserver host names (transport.ts).
 */

import { randomInt } from 'node:crypto';
import { formatNameserver, type Nameserver } from './nameserver.ts';
import { DEFAULT_DNS_TIMEOUT_MS, DnsTransportError, exchange } from './transport.ts';
import {
  type DecodedMessage,
  decodeMessage,
  DnsWireError,
  ednsRecord,
  encodeMessage,
  fqdn,
  RRClass,
  sameName,
} from './wire.ts';

export interface QueryOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** CAs trusted for DoH servers instead of the system's (PEM). */
  dohCA?: string;
}

export interface DnsAnswer {
  /** The server that answered. */
  server: Nameserver;
  message: DecodedMessage;
}

/** Checks that a reply answers our question (ID, QR bit, question), so a stray datagram is not taken. */
function checkReply(reply: DecodedMessage, id: number, name: string, type: number, server: Nameserver): void {
  const question = reply.questions[0];
  if (
    reply.id !== id ||
    !reply.qr ||
    (reply.questions.length > 0 && (!sameName(question.name, name) || question.type !== type))
  ) {
    throw new DnsWireError(`${formatNameserver(server)} answered another question`);
  }
}

async function askOne(
  server: Nameserver,
  name: string,
  type: number,
  options: QueryOptions,
): Promise<DecodedMessage> {
  const id = randomInt(0, 0x10000);
  const query = encodeMessage({
    id,
    rd: true,
    questions: [{ name: fqdn(name), type, class: RRClass.IN }],
    additionals: [ednsRecord(4096)],
  });
  const exchangeOptions = {
    timeoutMs: options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
    signal: options.signal,
    ca: options.dohCA,
  };
  if (server.kind === 'https') {
    const reply = decodeMessage(await exchange(server, query, 'udp', exchangeOptions));
    checkReply(reply, id, name, type, server);
    return reply;
  }
  let reply: DecodedMessage | undefined;
  try {
    reply = decodeMessage(await exchange(server, query, 'udp', exchangeOptions));
    checkReply(reply, id, name, type, server);
  } catch (err) {
    if (!(err instanceof DnsTransportError && err.timedOut)) throw err;
  }
  if (reply && !reply.tc) return reply;
  const tcpReply = decodeMessage(await exchange(server, query, 'tcp', exchangeOptions));
  checkReply(tcpReply, id, name, type, server);
  return tcpReply;
}

/**
 * Runs `fn` on each server in order and returns the first result; when all fail, the last error
 * (cert-manager's `tryAllNameservers`).
 */
export async function tryEachNameserver<T>(
  servers: readonly Nameserver[],
  fn: (server: Nameserver) => Promise<T>,
): Promise<T> {
  if (servers.length === 0) throw new Error('nameservers is required');
  let lastError: unknown;
  for (const server of servers) {
    try {
      return await fn(server);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

/**
 * Asks each server in turn until one answers (any RCODE counts as an answer); throws the last error when none
 * does.
 */
export async function dnsQuery(
  name: string,
  type: number,
  servers: readonly Nameserver[],
  options: QueryOptions = {},
): Promise<DnsAnswer> {
  return tryEachNameserver(servers, async (server) => ({
    server,
    message: await askOne(server, name, type, options),
  }));
}
