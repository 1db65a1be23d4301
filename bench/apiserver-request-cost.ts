import { readFile } from 'node:fs/promises';
import { Client, flag, listFlag, startServerProcess, writeResults } from './lib.ts';

/**
 * What one request costs the API server in CPU, by kind, over HTTPS with keep-alive, 10 at a time, as the
 * admin: the floor under bench:apiserver-mix's figure per request. A GET of a small object is Node's HTTP
 * and TLS with authentication, routing and the response; a create of a tiny ConfigMap adds the body's
 * decoding, validation, the storage write (a group commit on the SQLite writer thread) and the watch cache;
 * an Event create is the same with an issuance's Event body (6 of the ~16 writes per Certificate). CPU is the
 * server process's utime + stime from /proc (all threads) over the measured requests, after 300 unmeasured.
 *
 * Usage: npm run bench:apiserver-request-cost [-- --requests=3000 --root=DIR --results=NAME --cpu-prof=DIR
 *        --only=get|configmap|event --apiserver-node-args=a,b --bare --concurrency=10]
 * (--root: run the server from another checkout, e.g. to compare a change; --cpu-prof: the server's V8
 * profile into DIR, for bench:apiserver-phases; --only: that kind of request alone, for a profile of it;
 * --bare: the GET against bench/bare-https-server.ts instead, Node's HTTPS alone answering the same JSON)
 */

const REQUESTS = Number(flag('requests') ?? 3000);
/** Requests in flight at once; 1 makes every write a group commit of its own (storage/sqlite.ts). */
const CONCURRENCY = Number(flag('concurrency') ?? 10);
const WARMUP = 300;

async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const CPU_PROF_DIR = flag('cpu-prof');
const BARE = process.argv.includes('--bare');
const ONLY = BARE ? 'get' : flag('only');
const server = await startServerProcess(undefined, [], {
  ...(BARE ? { entry: 'bench/bare-https-server.ts' } : { root: flag('root') }),
  nodeArgs: [
    ...listFlag('apiserver-node-args'),
    ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []),
  ],
});
const client = new Client(server, CONCURRENCY);
const NS = 'bench';

async function measure(send: (i: number) => Promise<{ status: number }>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await send(-i - 1);
  const before = await cpuMs(server.pid);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const res = await send(next++);
        if (res.status >= 300) throw new Error(`request failed with ${res.status}`);
      }
    }),
  );
  return Math.round((((await cpuMs(server.pid)) - before) / REQUESTS) * 1000) / 1000;
}

const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const event = (i: number) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: `cert-${i}.187b2c3d4e5f6a7b`, namespace: NS },
  involvedObject: {
    kind: 'Certificate',
    namespace: NS,
    name: `cert-${i}`,
    uid: 'u',
    apiVersion: 'cert-manager.io/v1',
  },
  reason: 'Issuing',
  message: 'Issuing certificate as Secret does not exist',
  source: { component: 'cert-manager-certificates-trigger' },
  firstTimestamp: time,
  lastTimestamp: time,
  count: 1,
  type: 'Normal',
  reportingComponent: 'cert-manager-certificates-trigger',
});
try {
  if (!BARE) {
    await client.call('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS },
    });
  }
  const kinds: Record<string, [string, (i: number) => Promise<{ status: number }>]> = {
    get: ['GET a Namespace', () => client.call('GET', `/api/v1/namespaces/${NS}`)],
    configmap: [
      'create a ConfigMap (no data)',
      (i) =>
        client.call('POST', `/api/v1/namespaces/${NS}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${i}` },
        }),
    ],
    event: [
      "create an issuance's Event",
      (i) => client.call('POST', `/api/v1/namespaces/${NS}/events`, event(i)),
    ],
  };
  if (ONLY !== undefined && !(ONLY in kinds))
    throw new Error(`--only takes ${Object.keys(kinds).join(', ')}`);
  const rows: Record<string, number> = {};
  for (const [kind, [label, send]] of Object.entries(kinds)) {
    if (ONLY === undefined || ONLY === kind) rows[label] = await measure(send);
  }
  const table = [
    `| request (${REQUESTS} measured, ${CONCURRENCY} at a time, HTTPS keep-alive) | ${BARE ? 'bare node:https server' : 'API server'} CPU ms per request |`,
    '|---|---|',
    ...Object.entries(rows).map(([k, v]) => `| ${k} | ${v} |`),
  ].join('\n');
  await writeResults(
    flag('results') ?? 'apiserver-request-cost',
    {
      date: new Date().toISOString(),
      server: BARE ? 'bare node:https' : 'certkit apiserver',
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      cpuMsPerRequest: rows,
    },
    table,
  );
} finally {
  client.close();
  await server.stop();
}
