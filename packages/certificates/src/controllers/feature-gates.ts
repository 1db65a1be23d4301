// The values are Go booleans (strconv.ParseBool), as the shims' annotations are.
import { parseGoBool } from './shims/annotation-keys.ts';

/**
 * cert-manager's controller `--feature-gates` (`Name=true,Other=false`), with its gates, their defaults and
 * Kubernetes' component-base rules: an unknown name or a value that is not a Go boolean stops the controller at
 * start, and `AllAlpha`/`AllBeta` set every alpha or beta gate not named on its own. Users carry the flag over
 * from their cert-manager Deployment or Helm values, so every gate cert-manager knows is accepted, including the
 * removed ones it keeps; the gates that decide something in certkit are read where they do (see
 * `featureEnabled`'s callers), the others leave certkit as it is, which is their default's behaviour or a
 * feature it has either way.
 */

type PreRelease = 'Alpha' | 'Beta' | 'GA';

/** cert-manager's controller gates (internal/controller/feature): default and stage. */
export const FEATURE_GATES: FeatureGateTable = {
  DisallowInsecureCSRUsageDefinition: { default: true, preRelease: 'GA' },
  StableCertificateRequestName: { default: true, preRelease: 'Beta' },
  SecretsFilteredCaching: { default: true, preRelease: 'Beta' },
  ExperimentalCertificateSigningRequestControllers: { default: false, preRelease: 'Alpha' },
  ExperimentalGatewayAPISupport: { default: true, preRelease: 'Beta' },
  ListenerSets: { default: false, preRelease: 'Alpha' },
  AdditionalCertificateOutputFormats: { default: true, preRelease: 'GA' },
  ServerSideApply: { default: false, preRelease: 'Alpha' },
  LiteralCertificateSubject: { default: true, preRelease: 'Beta' },
  UseCertificateRequestBasicConstraints: { default: false, preRelease: 'Alpha' },
  NameConstraints: { default: true, preRelease: 'Beta' },
  OtherNames: { default: true, preRelease: 'Beta' },
  UseDomainQualifiedFinalizer: { default: true, preRelease: 'GA' },
  DefaultPrivateKeyRotationPolicyAlways: { default: true, preRelease: 'GA' },
  ACMEHTTP01IngressPathTypeExact: { default: true, preRelease: 'Beta' },
  ACMEUseARI: { default: false, preRelease: 'Alpha' },
  // Removed in cert-manager, kept there (and here) so that an old flag value still starts the controller.
  ValidateCAA: { default: false, preRelease: 'Alpha' },
};

/** The gates as set: every known gate with its value. */
export type FeatureGates = ReadonlyMap<string, boolean>;

/** A `--feature-gates` value component-base refuses; the message is its own. */
export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

/** A component's gates: default and stage of each. */
export type FeatureGateTable = Readonly<Record<string, { default: boolean; preRelease: PreRelease }>>;

/**
 * The gates a `--feature-gates` value sets, over the defaults of `known` (the controller's gates unless another
 * component's, such as the cainjector's, are given). Throws FeatureGateError.
 */
export function parseFeatureGates(value: string, known: FeatureGateTable = FEATURE_GATES): FeatureGates {
  const set = new Map<string, boolean>();
  for (const entry of value.split(',')) {
    const pair = entry.trim();
    if (pair === '') continue;
    const at = pair.indexOf('=');
    if (at < 0) throw new FeatureGateError(`missing bool value for ${pair}`);
    const name = pair.slice(0, at).trim();
    const text = pair.slice(at + 1).trim();
    const on = parseGoBool(text);
    if (on === undefined) {
      throw new FeatureGateError(
        `invalid value of ${name}=${text}, err: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`,
      );
    }
    if (name !== 'AllAlpha' && name !== 'AllBeta' && !(name in known))
      throw new FeatureGateError(`unrecognized feature gate: ${name}`);
    set.set(name, on);
  }
  const gates = new Map<string, boolean>();
  for (const [name, spec] of Object.entries(known)) {
    const all = spec.preRelease === 'GA' ? undefined : set.get(`All${spec.preRelease}`);
    gates.set(name, set.get(name) ?? all ?? spec.default);
  }
  return gates;
}

/** Whether a gate is on: as set, or its default when no gates were given. */
export function featureEnabled(gates: FeatureGates | undefined, name: keyof typeof FEATURE_GATES): boolean {
  return gates?.get(name) ?? FEATURE_GATES[name].default;
}
