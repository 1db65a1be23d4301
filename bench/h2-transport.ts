import { readFile } from 'node:fs/promises';
import { type ClientHttp2Session, connect as h2Connect } from 'node:http2';
import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createSecureContext } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RateLimiter } from '@certkit/runtime';
import { ConnectionPool } from '../packages/runtime/src/client/http1-pool.ts';
import { headerBlock, requestMessage } from '../packages/runtime/src/client/http1-request.ts';
import { Transport, USER_AGENT } from '../packages/runtime/src/client/transport.ts';
import { flag, median, type ServerProcess, startServerProcess, writeResults } from './lib.ts';

/**
 * What HTTP/2 would save against the HTTP/1.1 the API server and the runtime speak today, CPU per request on
 * both sides, the transport alone: each variant is a server that does nothing but HTTP
 * (bench/h2-transport-server.ts, its own process, answering ~2 KB JSON) and the client the variant would use,
 * in this process. Variants, interleaved round by round (ABBA):
 * - `h1`: node:https (native parser) with the runtime's own HTTP/1.1 pool for unary requests and its
 *   node:https streaming path (Transport.stream) for the watch, as today;
 * - `h1-js`: the same with the server's TLS connections parsed in JavaScript, as the API server does (ADR 1831);
 * - `h2-compat`: node:http2's secure server through its request/response API (HTTP/1.1 allowed by ALPN: how the
 *   API server's req/res handler would serve h2) and a node:http2 client session, one for all requests;
 * - `h2-stream`: node:http2's stream API on the server, the same client session.
 * The client session gets client-go's flow-control windows (4 MB a stream, 1 GB the connection), so a watch is
 * not held back by HTTP/2's 64 KB defaults.
 * Workloads: POST of a ~2 KB body answered with ~2 KB, `--requests` per round at concurrency 1, 10 and 50; and a
 * watch: `--events` ~2 KB events written `--burst` per turn to one long response, received and split into lines
 * (per event). Client CPU is this process's (process.cpuUsage), the server's its own, read over the same
 * connection before and after (`GET /cpu`); both are whole-process, all threads, in µs. `--apiserver` adds, for
 * scale, the same POST at concurrency 10 against `certkit apiserver` (a ConfigMap create of ~2 KB), HTTP/1.1 only,
 * its CPU from /proc (1/100 s ticks).
 * Usage: npm run bench:h2-transport [-- --rounds=6 --requests=2000 --events=10000 --burst=2 --apiserver]
 */

const ROUNDS = Number(flag('rounds') ?? 6);
const REQUESTS = Number(flag('requests') ?? 2000);
const EVENTS = Number(flag('events') ?? 10000);
/** Events per turn on the server: ~1.7 per socket write in the issuance (ADR 1195). */
const BURST = Number(flag('burst') ?? 2);
const WITH_APISERVER = process.argv.includes('--apiserver');
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A ~2 KB request body: a ConfigMap with a certificate's worth of data. */
const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'bench', labels: { 'controller.cert-manager.io/fao': 'true' } },
  data: { 'tls.crt': 'M'.repeat(1800) },
});
const BODY = JSON.stringify(configMap('example-com'));
const PATH = '/api/v1/namespaces/bench/configmaps';

interface Answer {
  status: number;
  body: string;
}

/** One client of one server: a unary request, a watch read to its end, and the server's CPU so far. */
interface Client {
  post(path: string, body: string): Promise<Answer>;
  /** Reads the watch to its end; returns the number of lines. */
  watch(events: number): Promise<number>;
  serverCpuUs(): Promise<number>;
  close(): void;
}

/** Splits a stream into lines as a watch client does (a line's text made), counting them. */
function countLines(stream: Readable): Promise<number> {
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let partial = '';
    let lines = 0;
    let longest = 0;
    stream.on('data', (chunk: Buffer) => {
      const text = partial + decoder.write(chunk);
      let start = 0;
      let end: number;
      while ((end = text.indexOf('\n', start)) >= 0) {
        longest = Math.max(longest, text.slice(start, end).length);
        lines++;
        start = end + 1;
      }
      partial = text.slice(start);
    });
    stream.once('end', () => (longest > 1000 ? resolve(lines) : reject(new Error('events too short'))));
    stream.once('error', reject);
  });
}

/** The runtime's HTTP/1.1 client: its pool for unary requests, its Transport.stream for the watch. */
function http1Client(server: ServerProcess): Client {
  const pool = new ConnectionPool({
    host: '127.0.0.1',
    port: Number(new URL(server.url).port),
    tls: { secureContext: createSecureContext({ ca: server.ca }), rejectUnauthorized: true },
  });
  // The header lines Transport sends with every unary request, made once as it makes them.
  const headers = headerBlock([
    ['Host', new URL(server.url).host],
    ['User-Agent', USER_AGENT],
    ['Connection', 'keep-alive'],
    ['Authorization', `Bearer ${server.token}`],
  ]);
  const transport = new Transport(
    { server: server.url, ca: server.ca, token: server.token },
    { limiter: new RateLimiter({ qps: -1 }) },
  );
  return {
    post: (path, body) =>
      pool.request(
        requestMessage('POST', path, headers, 'application/json', body, 'application/json'),
        undefined,
      ),
    async watch(events) {
      const { response } = await transport.stream({
        method: 'GET',
        path: '/watch',
        query: new URLSearchParams({ events: String(events), burst: String(BURST) }),
      });
      return countLines(response);
    },
    async serverCpuUs() {
      const answer = await pool.request(
        requestMessage('GET', '/cpu', headers, 'application/json', undefined, ''),
        undefined,
      );
      return (JSON.parse(answer.body) as { cpuUs: number }).cpuUs;
    },
    close() {
      pool.close();
      transport.close();
    },
  };
}

/** A node:http2 client session: every request a stream on the one connection, as client-go's h2 transport. */
async function http2Client(server: ServerProcess): Promise<Client> {
  const session: ClientHttp2Session = h2Connect(server.url, {
    ca: server.ca,
    // client-go (golang.org/x/net/http2): 4 MB per stream, 1 GB for the connection.
    settings: { initialWindowSize: 4 << 20 },
  });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  session.setLocalWindowSize(1 << 30);
  const common = {
    authorization: `Bearer ${server.token}`,
    'user-agent': USER_AGENT,
    accept: 'application/json',
  };
  const request = (method: string, path: string, body?: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const stream = session.request(
        body === undefined
          ? { ':method': method, ':path': path, ...common }
          : {
              ':method': method,
              ':path': path,
              ...common,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
        { endStream: body === undefined },
      );
      let status = 0;
      const chunks: Buffer[] = [];
      stream.once('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.once('end', () =>
        resolve({ status, body: (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8') }),
      );
      stream.once('error', reject);
      if (body !== undefined) stream.end(body);
    });
  return {
    post: (path, body) => request('POST', path, body),
    watch(events) {
      const stream = session.request(
        { ':method': 'GET', ':path': `/watch?events=${events}&burst=${BURST}`, ...common },
        { endStream: true },
      );
      return countLines(stream);
    },
    async serverCpuUs() {
      return (JSON.parse((await request('GET', '/cpu')).body) as { cpuUs: number }).cpuUs;
    },
    close() {
      session.close();
    },
  };
}

/** CPU µs a process has used so far, from /proc/PID/stat (utime + stime, 1/100 s ticks): for the API server. */
async function procCpuUs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

interface Variant {
  name: string;
  describe: string;
  server: ServerProcess;
  client: Client;
  /** Per workload: client and server CPU µs per unit, one entry per round. */
  measures: Map<string, { client: number[]; server: number[]; wallUs: number[] }>;
}

interface Workload {
  name: string;
  unit: string;
  units: number;
  run(v: Variant): Promise<void>;
}

/** `units` requests from `concurrency` workers. */
async function posts(
  v: Variant,
  units: number,
  concurrency: number,
  body: (i: number) => string,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < units) {
        const answer = await v.client.post(PATH, body(next++));
        if (answer.status !== 201 || answer.body.length < 1000) {
          throw new Error(`${v.name}: POST answered ${answer.status} ${answer.body.slice(0, 200)}`);
        }
      }
    }),
  );
}

const started: ServerProcess[] = [];
const variants: Variant[] = [];
try {
  const describe: Record<string, string> = {
    h1: 'node:https, native parser; runtime HTTP/1.1 pool (watch: node:https)',
    'h1-js': 'node:https, parsed in JS (as the API server); runtime HTTP/1.1 pool (watch: node:https)',
    'h2-compat': 'node:http2 secure server, req/res API, allowHTTP1; node:http2 client session',
    'h2-stream': 'node:http2 secure server, stream API; node:http2 client session',
  };
  for (const protocol of ['h1', 'h1-js', 'h2-compat', 'h2-stream']) {
    const server = await startServerProcess(undefined, ['--protocol', protocol], {
      entry: 'bench/h2-transport-server.ts',
    });
    started.push(server);
    const client = protocol.startsWith('h2') ? await http2Client(server) : http1Client(server);
    variants.push({ name: protocol, describe: describe[protocol], server, client, measures: new Map() });
  }

  const workloads: Workload[] = [1, 10, 50].map((concurrency) => ({
    name: `post-c${concurrency}`,
    unit: 'request',
    units: REQUESTS,
    run: (v) => posts(v, REQUESTS, concurrency, () => BODY),
  }));
  workloads.push({
    name: 'watch',
    unit: 'event',
    units: EVENTS,
    async run(v) {
      const lines = await v.client.watch(EVENTS);
      if (lines !== EVENTS) throw new Error(`${v.name}: watched ${lines} of ${EVENTS} events`);
    },
  });

  let apiserver: { variant: Variant; serial: number } | undefined;
  if (WITH_APISERVER) {
    const server = await startServerProcess();
    started.push(server);
    const client = http1Client(server);
    // The real server answers /readyz; its CPU comes from /proc, not from a /cpu path.
    for (;;) {
      const ready = await client.post('/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
      if (ready.status === 201 || ready.status === 409) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    client.serverCpuUs = () => procCpuUs(server.pid);
    apiserver = {
      variant: {
        name: 'apiserver',
        describe: 'certkit apiserver, ConfigMap create; runtime HTTP/1.1 pool',
        server,
        client,
        measures: new Map(),
      },
      serial: 0,
    };
  }
  const apiserverWorkload: Workload = {
    name: 'apiserver-post-c10',
    unit: 'request',
    units: REQUESTS,
    run: (v) => posts(v, REQUESTS, 10, () => JSON.stringify(configMap(`cm-${apiserver!.serial++}`))),
  };

  const measure = async (v: Variant, workload: Workload) => {
    gc();
    const serverBefore = await v.client.serverCpuUs();
    const clientBefore = process.cpuUsage();
    const t0 = performance.now();
    await workload.run(v);
    const wall = performance.now() - t0;
    const client = process.cpuUsage(clientBefore);
    const server = (await v.client.serverCpuUs()) - serverBefore;
    return {
      client: (client.user + client.system) / workload.units,
      server: server / workload.units,
      wallUs: (wall * 1000) / workload.units,
    };
  };

  // Warm-up: JIT, connections (50 of them for h1 at concurrency 50), TLS sessions.
  for (let i = 0; i < 2; i++) {
    for (const workload of workloads) for (const v of variants) await measure(v, workload);
    if (apiserver) await measure(apiserver.variant, apiserverWorkload);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const workload of workloads) {
      const order = r % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const result = await measure(v, workload);
        const m = v.measures.get(workload.name) ?? { client: [], server: [], wallUs: [] };
        v.measures.set(workload.name, m);
        m.client.push(result.client);
        m.server.push(result.server);
        m.wallUs.push(result.wallUs);
        process.stderr.write(
          `round ${r + 1} ${workload.name} ${v.name}: client ${round(result.client)} µs, server ${round(result.server)} µs per ${workload.unit}\n`,
        );
      }
    }
    if (apiserver) {
      const v = apiserver.variant;
      const result = await measure(v, apiserverWorkload);
      const m = v.measures.get(apiserverWorkload.name) ?? { client: [], server: [], wallUs: [] };
      v.measures.set(apiserverWorkload.name, m);
      m.client.push(result.client);
      m.server.push(result.server);
      m.wallUs.push(result.wallUs);
      process.stderr.write(
        `round ${r + 1} apiserver: client ${round(result.client)} µs, server ${round(result.server)} µs\n`,
      );
    }
  }

  const stats = (values: number[]) => ({
    median: round(median(values)),
    min: round(Math.min(...values)),
    rounds: values.map((x) => round(x)),
  });
  /** `of` over `to` per round, both sides summed (they ran back to back), and the median of those. */
  const ratio = (workload: string, of: Variant, to: Variant, side: 'client' | 'server' | 'both') => {
    const value = (v: Variant, i: number) => {
      const m = v.measures.get(workload)!;
      return side === 'both' ? m.client[i] + m.server[i] : m[side][i];
    };
    const rounds = Array.from({ length: ROUNDS }, (_, i) => value(of, i) / value(to, i));
    return { median: round(median(rounds), 3), rounds: rounds.map((x) => round(x, 3)) };
  };
  const h1 = variants.find((v) => v.name === 'h1-js')!;
  const workloadResults = workloads.map((workload) => ({
    name: workload.name,
    unit: workload.unit,
    unitsPerRound: workload.units,
    variants: Object.fromEntries(
      variants.map((v) => {
        const m = v.measures.get(workload.name)!;
        return [
          v.name,
          {
            clientCpuUs: stats(m.client),
            serverCpuUs: stats(m.server),
            bothCpuUs: stats(m.client.map((c, i) => c + m.server[i])),
            perSecond: round(1e6 / median(m.wallUs)),
          },
        ];
      }),
    ),
    overH1Js: Object.fromEntries(
      variants
        .filter((v) => v !== h1)
        .map((v) => [
          v.name,
          {
            client: ratio(workload.name, v, h1, 'client'),
            server: ratio(workload.name, v, h1, 'server'),
            both: ratio(workload.name, v, h1, 'both'),
          },
        ]),
    ),
  }));
  const apiserverResult = apiserver && {
    name: apiserverWorkload.name,
    clientCpuUs: stats(apiserver.variant.measures.get(apiserverWorkload.name)!.client),
    serverCpuUs: stats(apiserver.variant.measures.get(apiserverWorkload.name)!.server),
  };
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: availableParallelism(),
    rounds: ROUNDS,
    requestsPerRound: REQUESTS,
    eventsPerRound: EVENTS,
    burst: BURST,
    requestBytes: Buffer.byteLength(BODY),
    variants: Object.fromEntries(variants.map((v) => [v.name, v.describe])),
    workloads: workloadResults,
    ...(apiserverResult ? { apiserver: apiserverResult } : {}),
  };

  const label: Record<string, string> = {
    'post-c1': `POST ~2 KB → 201 ~2 KB, concurrency 1, per request`,
    'post-c10': `POST ~2 KB → 201 ~2 KB, concurrency 10, per request`,
    'post-c50': `POST ~2 KB → 201 ~2 KB, concurrency 50, per request`,
    watch: `watch, ~2 KB events, ${BURST} per turn, per event`,
  };
  const cell = (w: (typeof workloadResults)[number], name: string) => {
    const v = w.variants[name];
    return `${v.clientCpuUs.median} + ${v.serverCpuUs.median} = ${v.bothCpuUs.median}`;
  };
  const ratioCell = (w: (typeof workloadResults)[number], name: string) => {
    const r = w.overH1Js[name];
    return `${r.both.median} (client ${r.client.median}, server ${r.server.median})`;
  };
  const names = variants.map((v) => v.name);
  const others = names.filter((n) => n !== h1.name);
  const table = [
    `| ${ROUNDS} rounds, ABBA; CPU µs client + server = both | ${names.join(' | ')} | ${others.map((n) => `${n} / h1-js`).join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|${others.map(() => '---').join('|')}|`,
    ...workloadResults.map(
      (w) =>
        `| ${label[w.name]} | ${names.map((n) => cell(w, n)).join(' | ')} | ${others.map((n) => ratioCell(w, n)).join(' | ')} |`,
    ),
    '',
    ...(apiserverResult
      ? [
          `For scale: the same POST as a ConfigMap create against \`certkit apiserver\` (HTTP/1.1, runtime pool, concurrency 10): client ${apiserverResult.clientCpuUs.median} µs, server ${apiserverResult.serverCpuUs.median} µs per request (server from /proc, 1/100 s ticks).`,
          '',
        ]
      : []),
    "Cells: median over rounds of process CPU µs per request (or event), client (this process) + server (its own process), each whole-process. Ratios: medians of per-round ratios against h1-js (the API server's way today), of both sides summed and of each side.",
    ...variants.map((v) => `- ${v.name}: ${v.describe}`),
    `Servers answer without any work of their own (bench/h2-transport-server.ts); ${results.cpus} CPUs shared; Node ${process.version}; ${REQUESTS} requests or ${EVENTS} events per round and variant.`,
  ].join('\n');
  await writeResults(flag('results') ?? 'h2-transport', results, table);
} finally {
  for (const v of variants) v.client.close();
  for (const server of started) await server.stop();
}
