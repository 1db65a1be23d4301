import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../args.ts';
import {
  controllerFlags,
  CONTROLLER_FLAG_OPTIONS,
  featureGates as parseFeatureGates,
} from './controller-flags.ts';

const CSR_GATE = 'ExperimentalCertificateSigningRequestControllers';

const DEFAULTS = Object.fromEntries(
  Object.entries(CONTROLLER_FLAG_OPTIONS).map(([k, o]) => [k, 'default' in o ? o.default : undefined]),
);
const flags = (values: Record<string, string>) => controllerFlags({ ...DEFAULTS, ...values }).options;

describe("--feature-gates: cert-manager's gates", () => {
  it('defaults every gate as cert-manager does: alpha off, beta and GA on', () => {
    const gates = parseFeatureGates('');
    assert.equal(gates.get(CSR_GATE), false);
    assert.equal(gates.get('ServerSideApply'), false);
    assert.equal(gates.get('SecretsFilteredCaching'), true);
    assert.equal(gates.get('DisallowInsecureCSRUsageDefinition'), true);
  });

  it('reads Name=bool pairs with Go’s booleans, and AllAlpha for the alpha gates not named', () => {
    const gates = parseFeatureGates(`${CSR_GATE}=true, SecretsFilteredCaching=F`);
    assert.equal(gates.get(CSR_GATE), true);
    assert.equal(gates.get('SecretsFilteredCaching'), false);
    const all = parseFeatureGates('AllAlpha=true,ServerSideApply=false');
    assert.equal(all.get(CSR_GATE), true);
    assert.equal(all.get('ServerSideApply'), false);
  });

  it('refuses an unknown gate, a missing value and a value that is not a boolean, in component-base’s words', () => {
    const refuses = (value: string, message: string) =>
      assert.throws(
        () => parseFeatureGates(value),
        (err: unknown) => err instanceof UsageError && err.message === message,
      );
    refuses('NoSuchGate=true', '--feature-gates: unrecognized feature gate: NoSuchGate');
    refuses(CSR_GATE, `--feature-gates: missing bool value for ${CSR_GATE}`);
    refuses(
      `${CSR_GATE}=yes`,
      `--feature-gates: invalid value of ${CSR_GATE}=yes, err: strconv.ParseBool: parsing "yes": invalid syntax`,
    );
  });

  it('runs the CertificateSigningRequest signers when the gate is on, unless --controllers disables one', () => {
    assert.ok(!flags({}).controllers?.has('certificatesigningrequests-issuer-ca'));
    const on = flags({ 'feature-gates': `${CSR_GATE}=true` }).controllers!;
    for (const type of ['ca', 'selfsigned', 'acme', 'vault', 'venafi'])
      assert.ok(on.has(`certificatesigningrequests-issuer-${type}`), type);
    assert.ok(on.has('certificates-issuing'), 'the default set stays');
    const minusCa = flags({
      'feature-gates': `${CSR_GATE}=true`,
      controllers: '*,-certificatesigningrequests-issuer-ca',
    }).controllers!;
    assert.ok(!minusCa.has('certificatesigningrequests-issuer-ca'));
    assert.ok(minusCa.has('certificatesigningrequests-issuer-selfsigned'));
    // Named in --controllers, a signer runs without the gate (cert-manager registers them ungated).
    assert.ok(
      flags({ controllers: '*,certificatesigningrequests-issuer-selfsigned' }).controllers?.has(
        'certificatesigningrequests-issuer-selfsigned',
      ),
    );
  });

  it('SecretsFilteredCaching=false caches every Secret in full, as --secrets-filtered-caching=false', () => {
    assert.equal(flags({}).secretsFilteredCaching, true);
    assert.equal(flags({ 'feature-gates': 'SecretsFilteredCaching=false' }).secretsFilteredCaching, false);
    assert.equal(flags({ 'secrets-filtered-caching': 'false' }).secretsFilteredCaching, false);
  });
});
