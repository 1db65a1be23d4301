import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AcmeProblemError,
  AcmeTransportError,
  AcmeUnsupportedProfileError,
} from '../../acme/client/index.ts';
import { classifyAcmeError } from './errors.ts';

const now = new Date('2026-01-01T00:00:00Z');
const problem = (status: number, type: string, retryAfter?: Date) =>
  new AcmeProblemError({
    status,
    url: 'https://acme.test/x',
    problem: { type: `urn:ietf:params:acme:error:${type}`, detail: 'd' },
    retryAfter,
  });

describe('classifyAcmeError', () => {
  it('ends the object on an ACME 4xx and on a profile the server does not offer', () => {
    const rejected = problem(403, 'unauthorized');
    assert.deepEqual(classifyAcmeError(rejected, now), { final: true, problem: rejected });
    const profile = new AcmeUnsupportedProfileError('no profile');
    assert.deepEqual(classifyAcmeError(profile, now), { final: true, problem: profile });
  });

  it('waits out a 429 for as long as Retry-After says, and at least a second', () => {
    assert.deepEqual(classifyAcmeError(problem(429, 'rateLimited', new Date(now.getTime() + 90_000)), now), {
      final: false,
      afterMs: 90_000,
    });
    assert.deepEqual(classifyAcmeError(problem(429, 'rateLimited', new Date(now.getTime() - 5)), now), {
      final: false,
      afterMs: 1_000,
    });
    // Without Retry-After: the queue's backoff.
    assert.deepEqual(classifyAcmeError(problem(429, 'rateLimited'), now), {
      final: false,
      afterMs: undefined,
    });
  });

  it('retries 5xx answers, network failures and anything else', () => {
    assert.deepEqual(classifyAcmeError(problem(503, 'serverInternal'), now), { final: false });
    assert.deepEqual(
      classifyAcmeError(new AcmeTransportError('https://acme.test', new Error('ECONNREFUSED')), now),
      {
        final: false,
      },
    );
    assert.deepEqual(classifyAcmeError(new Error('informer not synced'), now), { final: false });
  });
});
