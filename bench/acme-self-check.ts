import { connect, createServer, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Challenge } from '../packages/certificates/src/api/acme-types.ts';
import { EmbeddedHTTP01Solver } from '../packages/certificates/src/acme/http01/embedded-solver.ts';
import { startBind } from '../packages/testenv/src/bind/bind.ts';
import { startDnsFront } from '../packages/testenv/src/bind/dns-front.ts';
import { freePort } from '../packages/testenv/src/net/free-ports.ts';
import { flag, median, writeResults } from './lib.ts';

/**
 * bench:acme-self-check — the controller's CPU for one HTTP-01 Challenge's self-check, as a Challenge sync
 * runs it on the embedded solver (docs/adr/1014): present, five one-pass checks back to back (each answered
 * by the solver's own listener, in this same process, as in the controller), clean up. Names resolve through
 * a real BIND behind a relay that counts the DNS queries; a relay in front of the listener counts the
 * connections. CPU is this process's (client and listener both), from process.cpuUsage.
 *
 * Usage: npm run bench:acme-self-check [-- --challenges=100 --rounds=5]
 */

const CHALLENGES = Number(flag('challenges') ?? 100);
const ROUNDS = Number(flag('rounds') ?? 5);
const PASSES = 5;
const ZONE = 'self-check.test';

const names = CHALLENGES * (ROUNDS + 1);
const bind = await startBind({
  zones: [{ name: ZONE, records: Array.from({ length: names }, (_, i) => `n${i} IN A 127.0.0.1`) }],
});
const dns = await startDnsFront(bind.port);
const listenerPort = await freePort();
// The self-check dials the relay, which counts connections and passes them to the listener.
let connections = 0;
const relayed = new Set<Socket>();
const relay = createServer((client) => {
  connections++;
  const upstream = connect(listenerPort, '127.0.0.1');
  relayed.add(client).add(upstream);
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayPort = (relay.address() as { port: number }).port;

const solver = new EmbeddedHTTP01Solver({ nameservers: [dns.address], port: relayPort });
const listener = await solver.listen({ host: '127.0.0.1', port: listenerPort });

function challenge(i: number): Challenge {
  return {
    apiVersion: 'acme.cert-manager.io/v1',
    kind: 'Challenge',
    metadata: { name: `c${i}`, namespace: 'bench' },
    spec: {
      url: `https://acme.invalid/chall/${i}`,
      authorizationURL: `https://acme.invalid/authz/${i}`,
      dnsName: `n${i}.${ZONE}`,
      type: 'HTTP-01',
      token: `token${i}`,
      key: `token${i}.thumbprint`,
      solver: { http01: { ingress: {} } },
      issuerRef: { name: 'acme' },
    },
  };
}

async function round(first: number) {
  const queries = dns.udpMessages;
  const conns = connections;
  const before = process.cpuUsage();
  for (let i = first; i < first + CHALLENGES; i++) {
    const ch = challenge(i);
    await solver.present(ch);
    for (let pass = 0; pass < PASSES; pass++) {
      const { answeredHere } = await solver.check(ch, undefined, 1);
      if (!answeredHere) throw new Error(`pass ${pass} of ${ch.spec.dnsName} was not answered here`);
    }
    await solver.cleanUp(ch);
  }
  const cpu = process.cpuUsage(before);
  return {
    cpuMsPerChallenge: Number(((cpu.user + cpu.system) / 1000 / CHALLENGES).toFixed(3)),
    dnsQueriesPerChallenge: (dns.udpMessages - queries) / CHALLENGES,
    connectionsPerChallenge: (connections - conns) / CHALLENGES,
  };
}

try {
  await round(0); // warm-up
  const rounds = [];
  for (let r = 1; r <= ROUNDS; r++) rounds.push(await round(r * CHALLENGES));
  const cpu = median(rounds.map((r) => r.cpuMsPerChallenge));
  const table = [
    `| ${CHALLENGES} HTTP-01 Challenges × ${ROUNDS} rounds | CPU ms per Challenge (median) | DNS queries per Challenge | connections per Challenge |`,
    '|---|---|---|---|',
    `| present, ${PASSES} one-pass checks, clean up | ${cpu} (${rounds.map((r) => r.cpuMsPerChallenge).join(', ')}) | ${rounds[0].dnsQueriesPerChallenge} | ${rounds[0].connectionsPerChallenge} |`,
    '',
    `${availableParallelism()} CPUs shared; the embedded solver's listener and self-check in one process, names (A records only) through BIND; Node ${process.version}.`,
  ].join('\n');
  await writeResults(
    'acme-self-check',
    { date: new Date().toISOString(), challenges: CHALLENGES, rounds },
    table,
  );
} finally {
  await listener.close();
  for (const socket of relayed) socket.destroy();
  await new Promise((resolve) => relay.close(resolve));
  await dns.close();
  await bind.stop();
}
