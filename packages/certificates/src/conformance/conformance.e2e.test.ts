/**
 * cert-manager's Certificates conformance suite (test/e2e/suite/conformance) against certkit: the embedded
 * API server and the whole certificate controller, for the SelfSigned and CA issuers as Issuer and as
 * ClusterIssuer. Per variant, in a fresh namespace, table scenarios 1–22 and standalone scenarios 30 and 31
 * run concurrently; each issued Secret gets the default validations and the feature validations
 * (validations.ts), plus the checks of its scenario (scenarios.ts).
 *
 * The controller runs under deploy/rbac.yaml's ServiceAccount with TokenRequest tokens, on a server that
 * authorises with RBAC (the environment); the last test fails if any of its requests was refused.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Environment, startEnvironment, VARIANTS } from '@certkit/testenv/conformance/environment';
import { opensslUnavailable } from '@certkit/testenv/conformance/openssl';
import { type Outcome, startVariant, type VariantRun } from '@certkit/testenv/conformance/runner';
import { STANDALONE_TITLES, TABLE } from '@certkit/testenv/conformance/scenarios';

let env: Environment;

before(async () => {
  env = await startEnvironment();
  const reason = opensslUnavailable();
  if (reason) console.log(`conformance: openssl checks skipped: ${reason}`);
});

after(async () => {
  await env?.close();
});

function assertPassed(outcome: Outcome) {
  assert.ok(
    outcome.failures.length === 0,
    `${outcome.name} (scenario ${outcome.id}):\n  ${outcome.failures.join('\n  ')}`,
  );
}

for (const variant of VARIANTS) {
  describe(`Certificates conformance with issuer type ${variant.title}`, () => {
    let run: VariantRun;

    before(async () => {
      run = await startVariant(env, variant);
    });

    after(async () => {
      if (run) console.log(`conformance: ${await run.summary()}`);
    });

    for (const scenario of TABLE) {
      it(`${scenario.id}. ${scenario.title}`, async () => assertPassed(await run.outcome(scenario.id)));
    }
    for (const id of [30, 31] as const) {
      it(`${id}. ${STANDALONE_TITLES[id]}`, async () => assertPassed(await run.outcome(id)));
    }
  });
}

describe('the controller under its own identity (deploy/rbac.yaml)', () => {
  it('was refused nothing through every scenario above', () => {
    assert.equal(env.controllerUser, 'system:serviceaccount:certkit:certkit');
    // Runs after the variants (node:test runs top-level suites in order): the controller did all its work.
    assert.deepEqual(
      [...new Set(env.forbidden)],
      [],
      'requests of the controller answered 403: deploy/rbac.yaml lacks these permissions',
    );
  });
});
