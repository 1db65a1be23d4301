import { generateKeyPairSync, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Agent, request } from 'undici';
import { AcmeClient, loadAccountKey } from '../packages/certificates/src/acme/client/index.ts';
import { signRequest } from '../packages/certificates/src/acme/client/jws.ts';
import { startPebble } from '../packages/testenv/src/pebble/pebble.ts';
import { flag, median, writeResults } from './lib.ts';

/**
 * bench:acme-requests — what one signed ACME request costs the controller (docs/adr/1014): client CPU per
 * POST-as-GET of an authorization through certkit's AcmeClient against a real Pebble (nonce rejection off),
 * with an RSA-2048 account key (cert-manager's) and with a P-256 one; a bare kept-alive undici GET of the
 * directory for the transport's share; and one JWS signature through jose (what the client does) against
 * `node:crypto.sign` directly. Rounds alternate the kinds; CPU is this process's, from process.cpuUsage.
 *
 * Usage: npm run bench:acme-requests [-- --requests=300 --rounds=3]
 */

const REQUESTS = Number(flag('requests') ?? 300);
const ROUNDS = Number(flag('rounds') ?? 3);

const pebble = await startPebble({ nonceRejectPercent: 0 });

async function cpuPer(n: number, run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await run();
  const cpu = process.cpuUsage(before);
  return Number(((cpu.user + cpu.system) / 1000 / n).toFixed(3));
}

async function clientFor(kind: 'rsa' | 'ec') {
  const { privateKey } =
    kind === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const accountKey = await loadAccountKey(privateKey);
  const client = new AcmeClient({ directoryUrl: pebble.directoryUrl, caBundle: pebble.caBundle, accountKey });
  await client.registerAccount({ termsOfServiceAgreed: true });
  const order = await client.newOrder({ identifiers: [{ type: 'dns', value: `${kind}.bench.test` }] });
  return { client, accountKey, authorization: order.authorizations[0] };
}

const rsa = await clientFor('rsa');
const ec = await clientFor('ec');
const agent = new Agent({ allowH2: false, connect: { ca: pebble.caBundle } });
const header = { alg: 'RS256', nonce: 'n'.repeat(22), url: rsa.authorization, kid: rsa.client.accountUrl };

const kinds = {
  'signed request, RSA-2048 (RS256)': () => rsa.client.getAuthorization(rsa.authorization),
  'signed request, P-256 (ES256)': () => ec.client.getAuthorization(ec.authorization),
  'bare undici GET': async () => {
    const response = await request(pebble.directoryUrl, { dispatcher: agent });
    await response.body.text();
  },
  'RS256 JWS through jose (the client)': () =>
    signRequest({
      key: rsa.accountKey,
      url: header.url,
      nonce: header.nonce,
      kid: header.kid,
      payload: undefined,
    }),
  'RS256 signature through node:crypto.sign': async () => {
    const protectedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
    return sign('sha256', Buffer.from(`${protectedHeader}.`), rsa.accountKey.privateKey).toString(
      'base64url',
    );
  },
};

try {
  for (const run of Object.values(kinds)) await cpuPer(20, run); // warm-up
  const rounds: Record<string, number>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round: Record<string, number> = {};
    for (const [name, run] of Object.entries(kinds)) round[name] = await cpuPer(REQUESTS, run);
    rounds.push(round);
  }
  const table = [
    `| ${REQUESTS} each × ${ROUNDS} rounds | client CPU ms each (median) | per round |`,
    '|---|---|---|',
    ...Object.keys(kinds).map(
      (name) =>
        `| ${name} | ${median(rounds.map((r) => r[name]))} | ${rounds.map((r) => r[name]).join(', ')} |`,
    ),
    '',
    `Pebble 2.4.0 on loopback, nonce rejection off, kept-alive HTTP/1.1; ${availableParallelism()} CPUs shared; Node ${process.version}.`,
  ].join('\n');
  await writeResults('acme-requests', { date: new Date().toISOString(), requests: REQUESTS, rounds }, table);
} finally {
  await rsa.client.close();
  await ec.client.close();
  await agent.close();
  await pebble.stop();
}
