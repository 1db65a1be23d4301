import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OWN_REQUEST_CREATE_WAIT_MS, OwnRequestCreates } from './own-request-creates.ts';

const request = (name: string, uid: string) => ({ metadata: { namespace: 'apps', name, uid } });

describe('OwnRequestCreates', () => {
  it('stands a reader aside until its cache shows the request, then forgets it', () => {
    const creates = new OwnRequestCreates();
    assert.equal(creates.pendingMs('apps', 'web-1', false, 0), undefined, 'nothing expected');
    creates.created('apps', 'web-1', 'uid-1', 0);
    assert.equal(creates.pendingMs('apps', 'web-1', false, 1000), OWN_REQUEST_CREATE_WAIT_MS - 1000);
    assert.equal(creates.pendingMs('apps', 'web-1', true, 1000), undefined, 'cached');
    assert.equal(creates.size, 0);
  });

  it('forgets a creation once an event of that request arrives, not of another with its name', () => {
    const creates = new OwnRequestCreates();
    creates.created('apps', 'web-1', 'uid-1', 0);
    creates.observed(request('web-1', 'uid-0'));
    assert.equal(creates.size, 1, 'an earlier request of the same name');
    creates.observed(request('web-1', 'uid-1'));
    assert.equal(creates.pendingMs('apps', 'web-1', false, 1), undefined);
  });

  it('lets a creation the cache never shows lapse, and sweeps lapsed ones', () => {
    const creates = new OwnRequestCreates();
    creates.created('apps', 'web-1', 'uid-1', 0);
    assert.equal(creates.pendingMs('apps', 'web-1', false, OWN_REQUEST_CREATE_WAIT_MS), undefined);
    for (let i = 0; i < 300; i++) creates.created('apps', `c-${i}`, `u-${i}`, 0);
    creates.created('apps', 'late', 'u', OWN_REQUEST_CREATE_WAIT_MS);
    assert.equal(creates.size, 1, 'the lapsed ones swept');
  });
});
