import { UsageError } from '../args.ts';

/**
 * cert-manager's `--feature-gates` (component-base's mapStringBool): `Name=true|false` pairs, comma-separated.
 * Every gate of cert-manager's controller is accepted, so that a Deployment's flag value carries over
 * unchanged; an unknown name is refused, as cert-manager refuses it at start. Two change what certkit does:
 * ExperimentalCertificateSigningRequestControllers runs the CSR signers, and SecretsFilteredCaching=false caches
 * every Secret in full (as --secrets-filtered-caching=false); the other gates name behaviour certkit has always
 * on or does not have, and are accepted as no-ops.
 */

type Stage = 'GA' | 'BETA' | 'ALPHA';

/** cert-manager's controller gates, with their stage and default. */
const GATES: Record<string, { stage: Stage; default: boolean }> = {
  DisallowInsecureCSRUsageDefinition: { stage: 'GA', default: true },
  AdditionalCertificateOutputFormats: { stage: 'GA', default: true },
  UseDomainQualifiedFinalizer: { stage: 'GA', default: true },
  DefaultPrivateKeyRotationPolicyAlways: { stage: 'GA', default: true },
  StableCertificateRequestName: { stage: 'BETA', default: true },
  SecretsFilteredCaching: { stage: 'BETA', default: true },
  ExperimentalGatewayAPISupport: { stage: 'BETA', default: true },
  LiteralCertificateSubject: { stage: 'BETA', default: true },
  NameConstraints: { stage: 'BETA', default: true },
  OtherNames: { stage: 'BETA', default: true },
  ACMEHTTP01IngressPathTypeExact: { stage: 'BETA', default: true },
  ExperimentalCertificateSigningRequestControllers: { stage: 'ALPHA', default: false },
  ListenerSets: { stage: 'ALPHA', default: false },
  ServerSideApply: { stage: 'ALPHA', default: false },
  UseCertificateRequestBasicConstraints: { stage: 'ALPHA', default: false },
  ACMEUseARI: { stage: 'ALPHA', default: false },
  ValidateCAA: { stage: 'ALPHA', default: false },
};

/** The meta-gates: every alpha (beta) gate not set explicitly takes their value. */
const ALL: Record<string, Stage> = { AllAlpha: 'ALPHA', AllBeta: 'BETA' };

/** Go's strconv.ParseBool. */
function parseBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** Each gate's value after `--feature-gates`; throws UsageError in component-base's words. */
export function parseFeatureGates(value: string): Map<string, boolean> {
  const explicit = new Map<string, boolean>();
  const all = new Map<Stage, boolean>();
  for (const entry of value.split(',')) {
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 0) throw new UsageError(`--feature-gates: missing bool value for ${entry.trim()}`);
    const name = entry.slice(0, eq).trim();
    const text = entry.slice(eq + 1).trim();
    const on = parseBool(text);
    if (on === undefined)
      throw new UsageError(
        `--feature-gates: invalid value of ${name}=${text}, err: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`,
      );
    if (name in ALL) all.set(ALL[name], on);
    else if (name in GATES) explicit.set(name, on);
    else throw new UsageError(`--feature-gates: unrecognized feature gate: ${name}`);
  }
  const gates = new Map<string, boolean>();
  for (const [name, gate] of Object.entries(GATES))
    gates.set(name, explicit.get(name) ?? all.get(gate.stage) ?? gate.default);
  return gates;
}
