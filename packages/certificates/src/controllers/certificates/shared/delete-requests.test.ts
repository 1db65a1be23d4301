import { isConflict } from '@certkit/apimachinery';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  certificate,
  certificateRequest,
  FakeEnvironment,
  keyPair,
} from '@certkit/testenv/controllers/fake-environment';
import { deleteRequests } from './delete-requests.ts';

let csrPem: string;

before(async () => {
  csrPem = (await keyPair()).csrPem;
});

describe('deleteRequests (shared by the request and revision managers)', () => {
  it('deletes each request, and takes one already gone as deleted', async () => {
    const cert = certificate();
    const env = await FakeEnvironment.start({
      certificates: [cert],
      requests: [certificateRequest(cert, 1, csrPem), certificateRequest(cert, 2, csrPem)],
    });
    try {
      const [first, second] = env.ctx.certificateRequests
        .getStore()
        .list()
        .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
      await deleteRequests(env.ctx, [first, second], new AbortController().signal);
      // Deleted a second time (the cache not yet caught up): NotFound is not an error.
      await deleteRequests(env.ctx, [first], new AbortController().signal);
      assert.deepEqual(env.writes(), [
        'delete certificaterequests.cert-manager.io web-1',
        'delete certificaterequests.cert-manager.io web-2',
      ]);
    } finally {
      await env.stop();
    }
  });

  it('leaves a namesake with another uid in place and reports the Conflict', async () => {
    const cert = certificate();
    const env = await FakeEnvironment.start({
      certificates: [cert],
      requests: [certificateRequest(cert, 1, csrPem)],
    });
    try {
      const [stored] = env.ctx.certificateRequests.getStore().list();
      const stale = { ...stored, metadata: { ...stored.metadata, uid: 'a-deleted-namesake' } };
      await assert.rejects(deleteRequests(env.ctx, [stale], new AbortController().signal), isConflict);
      assert.deepEqual(env.writes(), []);
      assert.equal(env.ctx.certificateRequests.getStore().list().length, 1);
    } finally {
      await env.stop();
    }
  });
});
