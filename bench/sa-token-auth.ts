import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type Agent, request } from 'node:https';
import { Authenticator } from '@certkit/apiserver/security/authentication';
import { ServiceAccountTokenAuthenticator } from '@certkit/apiserver/security/serviceaccount/authenticator';
import { tokenClaims } from '@certkit/apiserver/security/serviceaccount/claims';
import { resolveTokenConfig } from '@certkit/apiserver/security/serviceaccount/config';
import { signToken } from '@certkit/apiserver/security/serviceaccount/issuer';
import { signingKeyFromPem } from '@certkit/apiserver/security/serviceaccount/keys';
import { Client, flag, median, startServerProcess, throughput, writeResults } from './lib.ts';

/**
 * What authenticating with a ServiceAccount token costs against the admin token: GETs of one ConfigMap over
 * HTTPS with 16 concurrent clients, on one `certkit apiserver` process, in interleaved rounds (ABBA, the
 * machine is noisy: compare the ratios within the run).
 *
 * - admin: the generated admin token (a constant-time string comparison).
 * - sa-token: one ServiceAccount token from the TokenRequest API, reused on every request as clients do: its
 *   signature is verified once, then for ten seconds the verified-token cache answers, with the ServiceAccount's
 *   uid checked in the watch cache on every request.
 * - sa-token-cold: a fresh token per request (each verified: an RSA signature and claims), the worst case, as a
 *   bound on what the cache saves. Tokens are issued before the timed part.
 *
 *
 * Then, in this process, the cost of Authenticator.authenticate() alone per call (ns), for the same three cases
 * (the ServiceAccount looked up in a Map, as the watch cache holds it): the HTTP figures above are noisy on a
 * shared machine, these isolate what authentication adds.
 *
 * Usage: npm run bench:sa-token-auth [-- --requests=N --cold-requests=N --rounds=N]
 */

const CONCURRENCY = 16;
const requests = Number(flag('requests') ?? 2000);
const rounds = Number(flag('rounds') ?? 20);
const COLD_PER_ROUND = Number(flag('cold-requests') ?? 400);
const PATH = '/api/v1/namespaces/default/configmaps/bench';

function log(msg: string) {
  process.stderr.write(`[bench:sa-token-auth] ${msg}\n`);
}

async function getsPerSecond(client: Client, count: number): Promise<number> {
  const { opsPerSec } = await throughput(count, CONCURRENCY, async () => {
    const res = await client.call('GET', PATH);
    if (res.status !== 200) throw new Error(`GET failed: ${res.status} ${res.text}`);
  });
  return opsPerSec;
}

/** A GET with `token` on a shared agent (the cold path: a different token on every request). */
function getWithToken(url: string, agent: Agent, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${PATH}`,
      { agent, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function issueToken(admin: Client): Promise<string> {
  const res = await admin.call('POST', '/api/v1/namespaces/default/serviceaccounts/bench/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {},
  });
  if (res.status !== 201) throw new Error(`TokenRequest failed: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { status: { token: string } }).status.token;
}

/** ns per authenticate() call: the admin token, a cached ServiceAccount token, a fresh one each call. */
async function inProcess(): Promise<{ admin: number; cached: number; fresh: number }> {
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const config = resolveTokenConfig({ issuers: [issuer], signingKey: signingKeyFromPem(pem, 'bench') });
  const serviceAccount = { name: 'bench', namespace: 'default', uid: 'bench-uid' };
  const objects = { metadata: () => serviceAccount };
  const authenticator = new Authenticator({
    adminToken: 'x'.repeat(43),
    serviceAccountTokens: new ServiceAccountTokenAuthenticator(config, objects),
  });
  const issue = () =>
    signToken(
      config,
      tokenClaims({
        issuer,
        namespace: 'default',
        serviceAccount: { name: 'bench', uid: 'bench-uid' },
        audiences: [issuer],
        expirationSeconds: 3600,
        now: Math.floor(Date.now() / 1000),
      }),
    );
  const requestWith = (token: string) =>
    ({ headers: { authorization: `Bearer ${token}` }, socket: {} }) as unknown as IncomingMessage;
  const time = async (n: number, call: (i: number) => unknown) => {
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const user = await call(i);
      if (!user) throw new Error('not authenticated');
    }
    return ((performance.now() - started) * 1e6) / n;
  };
  const admin = requestWith('x'.repeat(43));
  const cachedReq = requestWith(await issue());
  const freshReqs = await Promise.all(Array.from({ length: 2000 }, async () => requestWith(await issue())));
  await time(20_000, () => authenticator.authenticate(admin));
  await time(20_000, () => authenticator.authenticate(cachedReq));
  return {
    admin: await time(200_000, () => authenticator.authenticate(admin)),
    cached: await time(200_000, () => authenticator.authenticate(cachedReq)),
    fresh: await time(freshReqs.length, (i) => authenticator.authenticate(freshReqs[i])),
  };
}

const server = await startServerProcess();
try {
  const admin = new Client(server, CONCURRENCY);
  for (const [path, body] of [
    ['/api/v1/namespaces/default/configmaps', { metadata: { name: 'bench' }, data: { a: 'b' } }],
    ['/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bench' } }],
  ] as const) {
    const res = await admin.call('POST', path, body);
    if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  }
  const sa = new Client({ ...server, token: await issueToken(admin) }, CONCURRENCY);
  // Warm up connections and the JIT on both paths.
  await getsPerSecond(admin, 1000);
  await getsPerSecond(sa, 1000);

  // Tokens for the cold path, issued before anything is timed: a token never seen before on every request.
  const coldTokens: string[] = [];
  while (coldTokens.length < rounds * COLD_PER_ROUND) {
    coldTokens.push(...(await Promise.all(Array.from({ length: 50 }, () => issueToken(admin)))));
  }
  const cold = async (round: number) => {
    const tokens = coldTokens.slice(round * COLD_PER_ROUND, (round + 1) * COLD_PER_ROUND);
    const { opsPerSec } = await throughput(tokens.length, CONCURRENCY, async (i) => {
      const status = await getWithToken(server.url, admin.agent, tokens[i]);
      if (status !== 200) throw new Error(`cold GET failed: ${status}`);
    });
    return opsPerSec;
  };
  const modes = {
    admin: () => getsPerSecond(admin, requests),
    sa: () => getsPerSecond(sa, requests),
    cold,
  };
  const rates: Record<keyof typeof modes, number[]> = { admin: [], sa: [], cold: [] };
  const names = Object.keys(modes) as (keyof typeof modes)[];
  for (let r = 0; r < rounds; r++) {
    // Each mode goes first, second and third in turn, so that drifting load falls on all alike.
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const which of order) rates[which].push(await modes[which](r));
    log(
      `round ${r + 1}: admin ${rates.admin.at(-1)!.toFixed(0)}/s, sa-token ${rates.sa.at(-1)!.toFixed(0)}/s, ` +
        `cold ${rates.cold.at(-1)!.toFixed(0)}/s`,
    );
  }
  admin.close();
  sa.close();

  const saRatios = rates.sa.map((v, i) => v / rates.admin[i]);
  const coldRatios = rates.cold.map((v, i) => v / rates.admin[i]);
  const perCall = await inProcess();
  const results = {
    authenticateNsPerCall: perCall,
    concurrency: CONCURRENCY,
    requestsPerRound: requests,
    coldRequestsPerRound: COLD_PER_ROUND,
    rounds,
    getsPerSec: rates,
    medianRatioSaTokenToAdmin: median(saRatios),
    medianRatioColdToAdmin: median(coldRatios),
  };
  const table = [
    `# bench:sa-token-auth (${new Date().toISOString().slice(0, 10)})`,
    '',
    `GET of one ConfigMap over HTTPS on loopback, ${CONCURRENCY} concurrent clients, one \`certkit apiserver\` process; ` +
      `${rounds} rounds, each mode in turn first (${requests} GETs per round; ${COLD_PER_ROUND} for the cold path). ` +
      'Ratios are the medians of the per-round ratios (the machine is shared and noisy).',
    '',
    '| credential | GETs/s (median) | ratio to admin token |',
    '| --- | ---: | ---: |',
    `| admin token | ${median(rates.admin).toFixed(0)} | 1 |`,
    `| ServiceAccount token, reused (verified once, then cached) | ${median(rates.sa).toFixed(0)} | ${median(saRatios).toFixed(3)} |`,
    `| ServiceAccount token, new on every request (signature verified each time) | ${median(rates.cold).toFixed(0)} | ${median(coldRatios).toFixed(3)} |`,
    '',
    'Authenticator.authenticate() alone, in process (ns per call):',
    '',
    '| credential | ns/call |',
    '| --- | ---: |',
    `| admin token | ${perCall.admin.toFixed(0)} |`,
    `| ServiceAccount token, cached | ${perCall.cached.toFixed(0)} |`,
    `| ServiceAccount token, verified (RS256, 2048-bit) | ${perCall.fresh.toFixed(0)} |`,
  ].join('\n');
  await writeResults('sa-token-auth', results, table);
} finally {
  await server.stop();
}
