import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseServeFlags, UsageError } from './args.ts';

/** The duration flags read Go durations, as kube-apiserver's do (pflag's DurationVar). */
describe('parseServeFlags durations', () => {
  it('defaults to kube-apiserver’s 1m storage initialization timeout and 1h event TTL', () => {
    const flags = parseServeFlags([]);
    assert.equal(flags.storageInitializationTimeoutMs, 60_000);
    assert.equal(flags.eventTtlMs, 3_600_000);
  });

  it('reads compound and fractional durations', () => {
    const flags = parseServeFlags(['--storage-initialization-timeout=1m30s', '--event-ttl=1.5h']);
    assert.equal(flags.storageInitializationTimeoutMs, 90_000);
    assert.equal(flags.eventTtlMs, 5_400_000);
    assert.equal(parseServeFlags(['--storage-initialization-timeout=0']).storageInitializationTimeoutMs, 0);
    assert.equal(parseServeFlags(['--event-ttl=500ms']).eventTtlMs, 500);
  });

  it('names the flag and quotes Go’s error for text that is not a duration', () => {
    assert.throws(() => parseServeFlags(['--event-ttl=1d']), {
      message: '--event-ttl: time: unknown unit "d" in duration "1d"',
    });
    assert.throws(
      () => parseServeFlags(['--storage-initialization-timeout=soon']),
      (err: unknown) => {
        assert.ok(err instanceof UsageError);
        assert.equal(err.message, '--storage-initialization-timeout: time: invalid duration "soon"');
        return true;
      },
    );
    assert.throws(
      () => parseServeFlags(['--event-ttl=30']),
      /--event-ttl: time: missing unit in duration "30"/,
    );
  });

  it('rejects a negative timeout and a TTL that is not positive', () => {
    assert.throws(() => parseServeFlags(['--storage-initialization-timeout=-1s']), /must not be negative/);
    assert.throws(() => parseServeFlags(['--event-ttl=0s']), /--event-ttl must be positive/);
    assert.throws(() => parseServeFlags(['--event-ttl=-5m']), /--event-ttl must be positive/);
  });
});

/** --request-timeout, kube-apiserver's deadline of every request that is not a watch. */
describe('parseServeFlags --request-timeout', () => {
  it('defaults to kube-apiserver’s 1m and reads a Go duration', () => {
    assert.equal(parseServeFlags([]).requestTimeoutMs, 60_000);
    assert.equal(parseServeFlags(['--request-timeout=2m30s']).requestTimeoutMs, 150_000);
    assert.equal(parseServeFlags(['--request-timeout=1500ms']).requestTimeoutMs, 1500);
  });

  it('refuses what is no duration, and a deadline that is not positive', () => {
    assert.throws(() => parseServeFlags(['--request-timeout=60']), {
      message: '--request-timeout: time: missing unit in duration "60"',
    });
    assert.throws(() => parseServeFlags(['--request-timeout=0s']), /--request-timeout must be positive/);
    assert.throws(() => parseServeFlags(['--request-timeout=-1m']), /--request-timeout must be positive/);
  });
});

/** --authorization-mode, as kube-apiserver's: RBAC by default, AlwaysAllow to turn authorization off. */
describe('parseServeFlags --authorization-mode', () => {
  it('defaults to RBAC and takes AlwaysAllow', () => {
    assert.equal(parseServeFlags([]).authorizationMode, 'RBAC');
    assert.equal(parseServeFlags(['--authorization-mode=AlwaysAllow']).authorizationMode, 'AlwaysAllow');
  });

  it('refuses another mode with one line naming the two it takes', () => {
    assert.throws(
      () => parseServeFlags(['--authorization-mode=Node,RBAC']),
      (err: Error) =>
        err instanceof UsageError &&
        err.message === '--authorization-mode must be RBAC or AlwaysAllow, got "Node,RBAC"',
    );
  });
});

describe('parseServeFlags --port', () => {
  it('takes 0 to 65535 in digits, and refuses an empty value rather than reading it as 0 (a random port)', () => {
    assert.equal(parseServeFlags(['--port=0']).port, 0);
    assert.equal(parseServeFlags(['--port', '7443']).port, 7443);
    for (const value of ['', ' ', '0x1bb', '1e3', '-1', '65536', '80.5']) {
      assert.throws(
        () => parseServeFlags([`--port=${value}`]),
        (err: unknown) =>
          err instanceof UsageError &&
          err.message === `--port must be an integer from 0 to 65535, got ${JSON.stringify(value)}`,
        value,
      );
    }
  });
});
