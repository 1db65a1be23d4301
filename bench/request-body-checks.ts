import assert from 'node:assert/strict';
import { join } from 'node:path';
import { flag, writeResults } from './lib.ts';

/**
 * The checks the API server makes of every JSON create and update body besides JSON.parse (ADR 1170): the
 * nesting limit (decode/json-depth.ts) and the repeated-key check (http/duplicate-fields.ts), timed against
 * JSON.parse of the same body, on the bodies of one issuance: a Certificate status update, an Event and a
 * certificate Secret. Also the long-number test every JSON body now gets (decode/exact-numbers.ts, ADR 0403),
 * and, for that ADR's choice, JSON.parse with a reviver reading each number's source text, which keeping
 * integers past 2^53 exactly would have put on every body. With --baseline=DIR (another checkout) its two checks are timed too, in the same
 * process, alternating with this checkout's, so the two are compared on one machine at one moment.
 *
 * Usage: npm run bench:request-body-checks [-- --baseline=DIR --iterations=20000 --results=NAME]
 */

const ITERATIONS = Number(flag('iterations') ?? 20_000);
const BASELINE = flag('baseline');
const ROUNDS = 5;

type DuplicateFields = (text: Buffer, parsed: unknown) => string[];
type DepthError = (text: Uint8Array) => string | undefined;
interface Checks {
  duplicateFields: DuplicateFields;
  jsonDepthError: DepthError;
}

async function loadChecks(root: string): Promise<Checks> {
  const src = join(root, 'packages', 'apiserver', 'src');
  const { duplicateFields } = (await import(join(src, 'http', 'duplicate-fields.ts'))) as {
    duplicateFields: DuplicateFields;
  };
  const { jsonDepthError } = (await import(join(src, 'decode', 'json-depth.ts'))) as {
    jsonDepthError: DepthError;
  };
  return { duplicateFields, jsonDepthError };
}

/** Base64 of the given length, as a certificate's or a key's in a Secret. */
const base64 = (bytes: number) => Buffer.alloc(bytes, 0x5a).toString('base64');
const TIME = '2026-11-26T15:43:00Z';

function certificateSecret(certBytes: number, keyBytes: number, caBytes: number): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'cert-1',
      namespace: 'bench',
      labels: { 'controller.cert-manager.io/fao': 'true' },
      annotations: {
        'cert-manager.io/certificate-name': 'cert-1',
        'cert-manager.io/issuer-name': 'ca-1',
        'cert-manager.io/alt-names': 'cert-1.example.com',
      },
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': base64(certBytes), 'tls.key': base64(keyBytes), 'ca.crt': base64(caBytes) },
  };
}
const BODIES: Record<string, unknown> = {
  'Certificate status update': {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: {
      name: 'cert-1',
      namespace: 'bench',
      resourceVersion: '1234',
      generation: 1,
      creationTimestamp: TIME,
    },
    spec: {
      secretName: 'cert-1',
      dnsNames: ['cert-1.example.com'],
      issuerRef: { name: 'ca-1', kind: 'Issuer' },
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'DoesNotExist',
          message: 'Issuing certificate as Secret does not exist',
          lastTransitionTime: TIME,
          observedGeneration: 1,
        },
        {
          type: 'Issuing',
          status: 'True',
          reason: 'DoesNotExist',
          message: 'Issuing certificate as Secret does not exist',
          lastTransitionTime: TIME,
          observedGeneration: 1,
        },
      ],
      nextPrivateKeySecretName: 'cert-1-abcde',
    },
  },
  Event: {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'cert-1.187b2c3d4e5f6a7b', namespace: 'bench' },
    involvedObject: {
      kind: 'Certificate',
      namespace: 'bench',
      name: 'cert-1',
      uid: '0b6f7c1e-2f1a-4d2e-9c1b-6a3e5f7d8c9a',
      apiVersion: 'cert-manager.io/v1',
      resourceVersion: '1234',
    },
    reason: 'Issuing',
    message: 'The certificate has been successfully issued',
    source: { component: 'cert-manager-certificates-issuing' },
    firstTimestamp: TIME,
    lastTimestamp: TIME,
    count: 1,
    type: 'Normal',
    reportingComponent: 'cert-manager-certificates-issuing',
  },
  // The PEM sizes of a P-256 and an RSA 2048 certificate, key and CA, base64-encoded as a Secret holds them.
  'certificate Secret, ECDSA P-256': certificateSecret(700, 240, 560),
  'certificate Secret, RSA 2048': certificateSecret(1200, 1700, 1150),
};

/** Microseconds per call, the best of ROUNDS rounds (the least disturbed by the machine's other load). */
function time(fn: () => unknown): number {
  for (let i = 0; i < 2000; i++) fn();
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / ITERATIONS / 1000);
  }
  return Math.round(best * 100) / 100;
}

const current = await loadChecks(join(import.meta.dirname, '..'));
const { mayHoldInexactNumber } = (await import(
  join(import.meta.dirname, '..', 'packages', 'apiserver', 'src', 'decode', 'exact-numbers.ts')
)) as { mayHoldInexactNumber: (text: string) => boolean };
/** A reviver that reads each number's source text, as keeping integers past 2^53 exactly would need. */
const sourceReviver = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && !Number.isSafeInteger(value) ? (context?.source ?? value) : value;
const baseline = BASELINE ? await loadChecks(BASELINE) : undefined;
const rows: Record<string, Record<string, number>>[] = [];
const lines: string[] = [];
for (const [name, body] of Object.entries(BODIES)) {
  const text = Buffer.from(JSON.stringify(body));
  const parsed = JSON.parse(text.toString('utf8')) as unknown;
  const row: Record<string, number> = {
    bytes: text.length,
    parse: time(() => JSON.parse(text.toString('utf8'))),
  };
  const utf8 = text.toString('utf8');
  assert.equal(mayHoldInexactNumber(utf8), false, `${name} would take the exact check`);
  row['long-number test'] = time(() => mayHoldInexactNumber(utf8));
  row['parse with source reviver'] = time(() => JSON.parse(text.toString('utf8'), sourceReviver));
  for (const [variant, checks] of [
    ['baseline', baseline],
    ['new', current],
  ] as const) {
    if (!checks) continue;
    row[`${variant} duplicates`] = time(() => checks.duplicateFields(text, parsed));
    row[`${variant} depth`] = time(() => checks.jsonDepthError(text));
  }
  rows.push({ [name]: row });
  const pair = (check: string) =>
    baseline ? `${row[`baseline ${check}`]} → ${row[`new ${check}`]}` : `${row[`new ${check}`]}`;
  lines.push(
    `| ${name} | ${row.bytes} | ${row.parse} | ${pair('duplicates')} | ${pair('depth')} | ${row['long-number test']} | ${row['parse with source reviver']} |`,
  );
}
const table = [
  `| body (µs per call, best of ${ROUNDS} × ${ITERATIONS}) | bytes | JSON.parse | repeated-key check${baseline ? ' (baseline → new)' : ''} | nesting check${baseline ? ' (baseline → new)' : ''} | long-number test | JSON.parse with a source reviver |`,
  '|---|---|---|---|---|---|---|',
  ...lines,
].join('\n');
await writeResults(
  flag('results') ?? 'request-body-checks',
  { date: new Date().toISOString(), iterations: ITERATIONS, rows },
  table,
);
