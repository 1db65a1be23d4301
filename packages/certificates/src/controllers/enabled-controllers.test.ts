import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ALL_CONTROLLERS,
  DEFAULT_ENABLED_CONTROLLERS,
  enabledControllers,
  UnknownControllerError,
} from './enabled-controllers.ts';

const sorted = (set: Set<string>) => [...set].sort();

describe("enabledControllers: cert-manager's --controllers", () => {
  it('* is the default set: everything but the Gateway API shims and the CertificateSigningRequest signers', () => {
    const all = enabledControllers(['*']);
    assert.deepEqual(sorted(all), [...DEFAULT_ENABLED_CONTROLLERS].sort());
    for (const off of ['gateway-shim', 'listenerset', 'certificatesigningrequests-issuer-ca'])
      assert.ok(!all.has(off), off);
    for (const on of ['certificaterequests-approver', 'certificates-issuing', 'orders', 'clusterissuers'])
      assert.ok(all.has(on), on);
  });

  it('-name alone implies *, and disables that one (the chart’s disableAutoApproval)', () => {
    const noApprover = enabledControllers(['-certificaterequests-approver']);
    assert.deepEqual(
      sorted(noApprover),
      sorted(new Set(DEFAULT_ENABLED_CONTROLLERS)).filter((n) => n !== 'certificaterequests-approver'),
    );
    assert.deepEqual(sorted(enabledControllers(['*', '-certificaterequests-approver'])), sorted(noApprover));
  });

  it('bare names enable just those; disables are applied last, whatever the order', () => {
    assert.deepEqual(sorted(enabledControllers(['issuers', 'orders'])), ['issuers', 'orders']);
    assert.deepEqual(sorted(enabledControllers(['-orders', 'issuers', 'orders'])), ['issuers']);
    assert.ok(enabledControllers(['*', 'gateway-shim']).has('gateway-shim'));
  });

  it('--enable-gateway-api adds gateway-shim after the list, and a -gateway-shim still removes it', () => {
    assert.ok(!enabledControllers(['*']).has('gateway-shim'));
    assert.ok(enabledControllers(['*'], { gatewayAPI: true }).has('gateway-shim'));
    assert.ok(enabledControllers(['issuers'], { gatewayAPI: true }).has('gateway-shim'));
    assert.ok(!enabledControllers(['*', '-gateway-shim'], { gatewayAPI: true }).has('gateway-shim'));
    assert.ok(enabledControllers(['*'], { gatewayAPI: true }).has('ingress-shim'));
  });

  it('ListenerSets (flag and gate) add listenerset only with the Gateway API, and -listenerset still wins', () => {
    assert.ok(!enabledControllers(['*'], { listenerSets: true }).has('listenerset'));
    assert.ok(!enabledControllers(['*'], { gatewayAPI: true }).has('listenerset'));
    const both = enabledControllers(['*'], { gatewayAPI: true, listenerSets: true });
    assert.ok(both.has('listenerset') && both.has('gateway-shim'));
    assert.ok(
      !enabledControllers(['*', '-listenerset'], { gatewayAPI: true, listenerSets: true }).has('listenerset'),
    );
    // Named alone, as gateway-shim may be: the caller checks the cluster serves ListenerSets.
    assert.ok(enabledControllers(['*', 'listenerset']).has('listenerset'));
  });

  it('refuses a name cert-manager does not know, with its words; accepts every name it knows', () => {
    assert.throws(
      () => enabledControllers(['*', '-certificaterequests-aprover']),
      (err: unknown) =>
        err instanceof UnknownControllerError &&
        err.message === '"certificaterequests-aprover" is not in the list of known controllers',
    );
    assert.throws(() => enabledControllers(['certificates']), UnknownControllerError);
    assert.equal(enabledControllers([...ALL_CONTROLLERS]).size, ALL_CONTROLLERS.length);
  });
});
