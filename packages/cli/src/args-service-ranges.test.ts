import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseServeFlags, UsageError } from './args.ts';

/** --service-cluster-ip-range and --service-node-port-range, with kube-apiserver's defaults. */
describe('parseServeFlags service ranges', () => {
  it('defaults to 10.0.0.0/24 and 30000-32767', () => {
    const flags = parseServeFlags([]);
    assert.equal(flags.serviceClusterIpRange, '10.0.0.0/24');
    assert.equal(flags.serviceNodePortRange, '30000-32767');
    const set = parseServeFlags([
      '--service-cluster-ip-range=10.96.0.0/12',
      '--service-node-port-range=31000-31999',
    ]);
    assert.equal(set.serviceClusterIpRange, '10.96.0.0/12');
    assert.equal(set.serviceNodePortRange, '31000-31999');
  });

  it('names the flag of a range that is not one', () => {
    assert.throws(
      () => parseServeFlags(['--service-cluster-ip-range=10.0.0.0']),
      (err: unknown) =>
        err instanceof UsageError &&
        /^--service-cluster-ip-range: invalid service cluster IP range/.test(err.message),
    );
    assert.throws(
      () => parseServeFlags(['--service-cluster-ip-range=fd00::/108']),
      (err: unknown) => err instanceof UsageError && /only IPv4 is supported/.test(err.message),
    );
    assert.throws(
      () => parseServeFlags(['--service-node-port-range=32767-30000']),
      (err: unknown) =>
        err instanceof UsageError && /^--service-node-port-range: invalid node port range/.test(err.message),
    );
  });
});
