import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Challenge } from '../../../api/types.ts';
import { MAX_SCHEDULED_PER_PASS, scheduleChallenges } from './scheduler.ts';

let seq = 0;
function challenge(
  dnsName: string,
  type: 'HTTP-01' | 'DNS-01',
  status: Challenge['status'] = {},
  createdSecondsAgo = 0,
): Challenge {
  seq++;
  return {
    metadata: {
      name: `ch-${seq}`,
      namespace: 'ns',
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0) - createdSecondsAgo * 1000).toISOString(),
    },
    spec: { dnsName, type } as Challenge['spec'],
    status,
  };
}

const names = (list: Challenge[]) => list.map((c) => c.spec.dnsName + '/' + c.spec.type);

describe('scheduleChallenges', () => {
  it('starts the oldest first and skips final and already processing Challenges', () => {
    const picked = scheduleChallenges(
      [
        challenge('new.test', 'HTTP-01', {}, 1),
        challenge('old.test', 'HTTP-01', {}, 100),
        challenge('done.test', 'HTTP-01', { state: 'valid' }, 200),
        challenge('failed.test', 'HTTP-01', { state: 'errored' }, 200),
        challenge('busy.test', 'HTTP-01', { processing: true, state: 'pending' }, 300),
      ],
      60,
    );
    assert.deepEqual(names(picked), ['old.test/HTTP-01', 'new.test/HTTP-01']);
  });

  it('runs one Challenge per name and type at a time: a wildcard and its apex take turns', () => {
    const apex = challenge('example.test', 'DNS-01', {}, 20);
    const wildcard = challenge('example.test', 'DNS-01', {}, 10);
    assert.deepEqual(scheduleChallenges([wildcard, apex], 60), [apex]);
    const running = { ...apex, status: { processing: true } };
    assert.deepEqual(scheduleChallenges([wildcard, running], 60), []);
    // Another type for the same name is another pair.
    const http = challenge('example.test', 'HTTP-01');
    assert.deepEqual(scheduleChallenges([running, http], 60), [http]);
  });

  it('keeps within --max-concurrent-challenges, counting every processing Challenge, final ones too', () => {
    const processing = [
      challenge('a.test', 'HTTP-01', { processing: true }),
      challenge('b.test', 'HTTP-01', { processing: true, state: 'valid' }),
    ];
    const waiting = ['c', 'd', 'e'].map((h) => challenge(`${h}.test`, 'HTTP-01'));
    assert.equal(scheduleChallenges([...processing, ...waiting], 3).length, 1);
    assert.equal(scheduleChallenges([...processing, ...waiting], 2).length, 0);
  });

  it(`starts at most ${MAX_SCHEDULED_PER_PASS} per pass`, () => {
    const many = Array.from({ length: 30 }, (_, i) => challenge(`h${i}.test`, 'DNS-01'));
    assert.equal(scheduleChallenges(many, 60).length, MAX_SCHEDULED_PER_PASS);
  });

  it('leaves Challenges being deleted alone', () => {
    const deleting = challenge('gone.test', 'HTTP-01');
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.deepEqual(scheduleChallenges([deleting], 60), []);
  });
});
