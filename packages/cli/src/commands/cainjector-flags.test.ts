import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flagDefaults } from '../flags.ts';
import { CAINJECTOR_FLAG_OPTIONS } from './cainjector-flag-table.ts';
import { cainjectorFeatureGates, cainjectorFlags } from './cainjector-flags.ts';

const parse = (values: Record<string, string> = {}) =>
  cainjectorFlags({ ...flagDefaults(CAINJECTOR_FLAG_OPTIONS), ...values });

describe('certkit cainjector flags', () => {
  it('default to cainjector’s: every injectable, the Certificate source, merging, its Lease timings', () => {
    const flags = parse();
    assert.deepEqual([...flags.options.injectables!].sort(), [
      'apiservice',
      'customresourcedefinition',
      'mutatingwebhookconfiguration',
      'validatingwebhookconfiguration',
    ]);
    assert.equal(flags.options.certificatesDataSource, true);
    assert.equal(flags.options.mergeBundles, true);
    assert.deepEqual(flags.options.ignoreNamespaces, []);
    assert.equal(flags.leaderElect, true);
    assert.equal(flags.leaderElectionNamespace, 'kube-system');
    assert.deepEqual(flags.leaderElectionTimings, {
      leaseDurationMs: 60_000,
      renewDeadlineMs: 40_000,
      retryPeriodMs: 15_000,
    });
  });

  it('turn each injectable and the Certificate source off, and merging with CAInjectorMerging=false', () => {
    const flags = parse({
      'enable-apiservices-injectable': 'false',
      'enable-customresourcedefinitions-injectable': 'false',
      'enable-certificates-data-source': 'false',
      'feature-gates': 'CAInjectorMerging=false,ServerSideApply=true',
      'ignore-namespaces': 'kube-system, team-b',
    });
    assert.deepEqual([...flags.options.injectables!].sort(), [
      'mutatingwebhookconfiguration',
      'validatingwebhookconfiguration',
    ]);
    assert.equal(flags.options.certificatesDataSource, false);
    assert.equal(flags.options.mergeBundles, false);
    assert.deepEqual(flags.options.ignoreNamespaces, ['kube-system', 'team-b']);
  });

  it('refuse what cainjector refuses, naming the flag', () => {
    assert.throws(() => cainjectorFeatureGates('Unknown=true'), /unrecognized feature gate: Unknown/);
    assert.throws(
      () => cainjectorFeatureGates('CAInjectorMerging'),
      /missing bool value for CAInjectorMerging/,
    );
    assert.throws(
      () => cainjectorFeatureGates('CAInjectorMerging=yes'),
      /invalid value of CAInjectorMerging=yes/,
    );
    assert.throws(() => parse({ 'leader-elect': 'yes' }), /--leader-elect must be true or false/);
    assert.throws(
      () => parse({ 'leader-election-renew-deadline': '90s' }),
      /--leader-election-lease-duration must be greater than --leader-election-renew-deadline/,
    );
  });
});
