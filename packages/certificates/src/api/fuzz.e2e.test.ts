/**
 * Property-based fuzzing of the API server as `certkit up` serves it (cert-manager CRDs and admission):
 * raw paths, raw query strings, headers, content types and bodies on every verb, on built-in resources
 * (ConfigMap, Secret, Namespace, Event, Lease, CustomResourceDefinition) and custom ones (Certificate,
 * CertificateRequest, Issuer, ClusterIssuer, a free-form one), their status subresources, and the
 * non-resource paths; one case in ten sends its request two or four times at once. The generators are in
 * @certkit/testenv/cert-manager/fuzz-requests.
 *
 * Whatever the request, the server answers within a deadline, never with a 5xx (but the intended ones,
 * below), keeps answering /healthz (on the same keep-alive connection when it stays open), and logs no
 * internal error ('request failed').
 *
 * The seed is printed; FUZZ_SEED=<seed> replays a run and FUZZ_RUNS=<n> sets how many requests are made
 * (default 500, 10-20 s here).
 */

import assert from 'node:assert/strict';
import { Agent } from 'node:https';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TestServer } from '@certkit/testenv/apiserver/test-server';
import {
  type RawRequest,
  type RawResponse,
  rawRequest,
  startCertManagerServer,
} from '@certkit/testenv/apiserver/cert-manager-server';
import {
  BASE_OBJECTS,
  describeRequest,
  type FuzzCase,
  fuzzCaseArb,
} from '@certkit/testenv/cert-manager/fuzz-requests';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 500;
/** Long enough for the slowest legitimate answer (a read at a future resourceVersion waits 3 s). */
const REQUEST_DEADLINE_MS = 10_000;

/**
 * The 5xx answers that are intended, as kube-apiserver gives them for a well-formed request:
 * - 504 Timeout with the ResourceVersionTooLarge cause: a read at a resourceVersion not written yet, after
 *   waiting for it (3 s); clients retry.
 * 429 TooManyRequests (the inflight limits, with Retry-After) is a 4xx and passes without an exception.
 */
function isIntended5xx(res: RawResponse): boolean {
  if (res.status !== 504) return false;
  try {
    const body = JSON.parse(res.text);
    return body.reason === 'Timeout' && body.details?.causes?.[0]?.reason === 'ResourceVersionTooLarge';
  } catch {
    return false;
  }
}

/**
 * Requests that would take the test's own fixtures away from every later case: deleting the namespace
 * collection or `default` (nothing namespaced could be created after), or the CRDs (custom resources would
 * stop being served). Not sent. The path is read as the server could read it: empty and `.` segments
 * dropped, `..` taken back.
 */
function destroysFixtures(req: RawRequest): boolean {
  if (req.method !== 'DELETE') return false;
  const segments: string[] = [];
  for (const raw of req.path.split('?')[0].split('/')) {
    let s = raw;
    try {
      s = decodeURIComponent(raw);
    } catch {
      // Left as it is: the server answers 400 to it.
    }
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  const path = `/${segments.join('/')}`;
  return (
    path === '/api/v1/namespaces' ||
    path === '/api/v1/namespaces/default' ||
    (path.startsWith('/apis/apiextensions.k8s.io/v1/customresourcedefinitions') &&
      !path.startsWith('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.'))
  );
}

describe('fuzzing the API server', () => {
  let t: TestServer;
  /** The server's error log: any 'request failed' is an exception a request caused (a bug). */
  const errors: Record<string, unknown>[] = [];

  /** Creates the base objects that are missing (after a delete took one away). */
  async function ensureFixtures(): Promise<void> {
    for (const { path, object } of Object.values(BASE_OBJECTS)) {
      await t.fetch('POST', path, { body: object });
    }
  }

  before(async () => {
    t = await startCertManagerServer({
      log: (e) => {
        if (e.level === 'error') errors.push(e);
      },
    });
    for (const { path, object } of Object.values(BASE_OBJECTS)) {
      const res = await t.fetch('POST', path, { body: object });
      assert.equal(res.status, 201, `${path}: ${res.text}`);
    }
  });
  after(async () => {
    await t?.close();
  });

  it(`no request gets a 5xx, hangs, stops the server or logs an internal error (seed ${SEED}, ${RUNS} runs)`, async () => {
    // Printed first, so that a failure (or a hang the runner kills) can be replayed.
    console.log(`# fuzz: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}`);
    const answers = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fuzzCaseArb(t.token).filter((c) => !destroysFixtures(c.request)),
        async ({ request: req, copies }: FuzzCase) => {
          const logged = errors.length;
          // One keep-alive connection for a single request and the /healthz after it: whatever the request
          // left unread on the connection must not be read as (part of) the next request.
          const connection =
            copies === 1 ? new Agent({ ca: t.caCertPem, keepAlive: true, maxSockets: 1 }) : undefined;
          const responses = await Promise.all(
            Array.from({ length: copies }, () => rawRequest(t, req, REQUEST_DEADLINE_MS, connection)),
          );
          for (const res of responses) {
            const key = `${req.method} ${res.status}`;
            answers.set(key, (answers.get(key) ?? 0) + 1);
            assert.ok(
              res.status < 500 || isIntended5xx(res),
              `${describeRequest(req)}: ${res.status} ${res.text.slice(0, 500)}`,
            );
          }
          const health = await rawRequest(
            t,
            { method: 'GET', path: '/healthz' },
            REQUEST_DEADLINE_MS,
            connection,
          );
          connection?.destroy();
          assert.equal(health.status, 200, `/healthz after ${describeRequest(req)}: ${health.text}`);
          assert.deepEqual(errors.slice(logged), [], `errors logged for ${describeRequest(req)}`);
          if (req.method === 'DELETE' && responses.some((res) => res.status < 300)) await ensureFixtures();
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // What the requests reached: a run that only collects 400s would test little.
    console.log(
      `# fuzz answers: ${[...answers]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}`,
    );
    assert.deepEqual(errors, [], 'the server logged internal errors');
  });
});
