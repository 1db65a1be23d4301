import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { etcdErrorInWords } from './etcd-error.ts';

/** The messages EtcdStorage.connect gave for these endpoints (grpc-js's, inside the store's). */
const REFUSED =
  'etcd unreachable after 5000 ms: 14 UNAVAILABLE: No connection established. Last error: Error: connect ' +
  'ECONNREFUSED 127.0.0.1:1. Resolution note: ';
const UNRESOLVED =
  'etcd unreachable after 5000 ms: 14 UNAVAILABLE: Name resolution failed for target dns:no-such-host.invalid:2379';

describe('etcd errors in words', () => {
  it("names --etcd-endpoints and the socket's or the resolver's error, without gRPC's wrapping", () => {
    assert.equal(
      etcdErrorInWords(new Error(REFUSED), ['http://127.0.0.1:1']).message,
      '--etcd-endpoints http://127.0.0.1:1: etcd did not answer within 5 s (connect ECONNREFUSED 127.0.0.1:1); ' +
        'is it running?',
    );
    assert.equal(
      etcdErrorInWords(new Error(UNRESOLVED), ['http://no-such-host.invalid:2379', 'http://b:2379']).message,
      '--etcd-endpoints http://no-such-host.invalid:2379,http://b:2379: etcd did not answer within 5 s ' +
        '(Name resolution failed for target dns:no-such-host.invalid:2379); is it running?',
    );
  });

  it('prefixes any other error with the flag, keeping it as the cause', () => {
    const other = new Error('etcd: permission denied');
    const worded = etcdErrorInWords(other, ['http://a:2379']);
    assert.equal(worded.message, '--etcd-endpoints http://a:2379: etcd: permission denied');
    assert.equal(worded.cause, other);
  });
});
