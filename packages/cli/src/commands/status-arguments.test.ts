import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../flags.ts';
import { CLUSTER_FLAGS, STATUS_FLAGS } from './flag-tables.ts';
import { status } from './status.ts';

/** `certkit status` arguments a new user gets wrong, refused before any cluster is asked. */

describe('certkit status arguments', () => {
  const flags = { ...CLUSTER_FLAGS, ...STATUS_FLAGS };

  it('a Certificate name where the word certificate goes: one line with the command that works', async () => {
    await assert.rejects(
      status(['web'], flags),
      (err) =>
        err instanceof UsageError &&
        err.message ===
          'certkit status shows Certificates; got "web": for one, run "certkit status certificate web"',
    );
  });

  it('two names: one line saying it takes one', async () => {
    await assert.rejects(
      status(['certificate', 'web', 'api'], flags),
      (err) => err instanceof UsageError && err.message === 'certkit status certificate takes one NAME',
    );
  });
});
