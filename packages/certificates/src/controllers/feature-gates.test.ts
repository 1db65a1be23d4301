import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEATURE_GATES, FeatureGateError, featureEnabled, parseFeatureGates } from './feature-gates.ts';

const refused = (value: string, message: string) =>
  assert.throws(
    () => parseFeatureGates(value),
    (err: unknown) => err instanceof FeatureGateError && err.message === message,
  );

describe('--feature-gates', () => {
  it('defaults to cert-manager’s: ListenerSets off, ExperimentalGatewayAPISupport on', () => {
    assert.equal(featureEnabled(undefined, 'ListenerSets'), false);
    assert.equal(featureEnabled(undefined, 'ExperimentalGatewayAPISupport'), true);
    const none = parseFeatureGates('');
    assert.equal(none.size, Object.keys(FEATURE_GATES).length);
    assert.equal(featureEnabled(none, 'ListenerSets'), false);
  });

  it('sets named gates from Go booleans, spaces and empty entries ignored', () => {
    const gates = parseFeatureGates(' ListenerSets=true, ,ExperimentalGatewayAPISupport = F,ACMEUseARI=1');
    assert.equal(featureEnabled(gates, 'ListenerSets'), true);
    assert.equal(featureEnabled(gates, 'ExperimentalGatewayAPISupport'), false);
    assert.equal(featureEnabled(gates, 'ACMEUseARI'), true);
    assert.equal(featureEnabled(gates, 'OtherNames'), true);
  });

  it('AllAlpha and AllBeta set the gates of that stage not named on their own; GA gates keep theirs', () => {
    const gates = parseFeatureGates('AllAlpha=true,ServerSideApply=false,AllBeta=false');
    assert.equal(featureEnabled(gates, 'ListenerSets'), true);
    assert.equal(featureEnabled(gates, 'ServerSideApply'), false);
    assert.equal(featureEnabled(gates, 'ExperimentalGatewayAPISupport'), false);
    assert.equal(featureEnabled(gates, 'AdditionalCertificateOutputFormats'), true);
  });

  it('refuses what component-base refuses, with its words', () => {
    refused('ListenerSet=true', 'unrecognized feature gate: ListenerSet');
    refused('ListenerSets', 'missing bool value for ListenerSets');
    refused(
      'ListenerSets=yes',
      'invalid value of ListenerSets=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
    );
  });
});
