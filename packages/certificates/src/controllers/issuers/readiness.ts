import { formatFieldError } from '@certkit/apimachinery';
import { IssuerReasons } from '../../api/constants.ts';
import { validateClusterIssuer, validateIssuer } from '../../api/validation.ts';
import { certificateMatchesKey } from '../../pki/index.ts';
import type { ACMEIssuerStatus } from '../../api/types.ts';
import type { ControllerContext } from '../context.ts';
import { acmeReadiness } from './acme-setup.ts';
import { cachedCaKeyPair, caValidityProblem, missingSetupEntry } from './ca-keypair.ts';
import { resourceNamespace, issuerType, type IssuerHandle } from './generic.ts';

/**
 * Whether an issuer can sign (cert-manager's Issuer.Setup for each type): SelfSigned always can; CA can once
 * its Secret holds a CA certificate and the matching private key; ACME once its account is registered
 * (acme-setup.ts). The answer becomes the Ready condition.
 */

export interface Readiness {
  ready: boolean;
  reason: string;
  /** Omitted from the condition when empty, as Go's omitempty does. */
  message: string;
  /**
   * When the answer changes by itself, with nothing to send an event: a CA certificate reaching its notAfter
   * or its notBefore. The issuer is reconciled again then.
   */
  changesAt?: Date;
  /** ACME issuers: the `status.acme` to write with the condition. */
  acme?: ACMEIssuerStatus;
  /**
   * Whether a not-ready answer is worth another try with backoff (default true). False where cert-manager
   * waits for a change of the issuer or its Secrets instead, e.g. an ACME server's 4xx answer.
   */
  retry?: boolean;
  /**
   * Whether cert-manager's Setup records the condition as an Event too (default true: the CA issuer does for
   * every answer; the ACME issuer only for a few).
   */
  event?: boolean;
  /**
   * The error cert-manager's Setup returns for this answer, where it returns one (a CA Secret missing or
   * unreadable): its issuers controller then records a second Warning, ErrInitIssuer, with it.
   */
  initError?: string;
}

export const ReadinessReasons = {
  ...IssuerReasons,
  /** The spec fails the webhook's validation (no webhook may have run). */
  InvalidIssuer: 'InvalidIssuer',
  /** A valid issuer of a type certkit does not implement (vault, venafi). */
  ErrInitIssuer: 'ErrInitIssuer',
} as const;

export const KEY_PAIR_VERIFIED_MESSAGE = 'Signing CA verified';
const GET_KEY_PAIR_PREFIX = 'Error getting keypair for CA issuer: ';

const notReady = (reason: string, message: string): Readiness => ({ ready: false, reason, message });

function specErrors(handle: IssuerHandle): string | undefined {
  const errors =
    handle.kind === 'ClusterIssuer' ? validateClusterIssuer(handle.issuer) : validateIssuer(handle.issuer);
  if (errors.length === 0) return undefined;
  const list = errors.map(formatFieldError);
  return list.length === 1 ? list[0] : `[${list.join(', ')}]`;
}

/** CA.Setup's answer when it cannot read the key pair: ErrGetKeyPair, and the error it returns. */
const keyPairError = (error: string): Readiness => ({
  ...notReady(ReadinessReasons.ErrGetKeyPair, GET_KEY_PAIR_PREFIX + error),
  initError: error,
});

/** CA.Setup. The Secret is read once (cert-manager reads it twice), through the Secret getter. */
async function caReadiness(ctx: ControllerContext, handle: IssuerHandle): Promise<Readiness> {
  const namespace = resourceNamespace(ctx, handle);
  const secretName = handle.issuer.spec?.ca?.secretName ?? '';
  let pair;
  try {
    const secret = await ctx.secrets.getWithData(namespace, secretName);
    if (!secret) return keyPairError(`secrets "${secretName}" not found`);
    const missing = missingSetupEntry(secret);
    if (missing) return keyPairError(missing);
    pair = cachedCaKeyPair(secret);
  } catch (err) {
    return keyPairError((err as Error).message);
  }
  if (!pair.cert.isCA)
    return notReady(ReadinessReasons.ErrInvalidKeyPair, `${GET_KEY_PAIR_PREFIX}certificate is not a CA`);
  // cert-manager leaves this to signing time; a mismatched pair could never sign, so say so now.
  if (!certificateMatchesKey(pair.cert, pair.key)) {
    return notReady(
      ReadinessReasons.ErrInvalidKeyPair,
      `${GET_KEY_PAIR_PREFIX}the private key does not match the CA certificate's public key`,
    );
  }
  // Ready=True for an expired CA would send every request to a signing that fails; a CA not valid yet
  // becomes Ready by itself at its notBefore, and a valid one stops being Ready at its notAfter.
  const now = ctx.now();
  const invalid = caValidityProblem(pair.cert, now);
  if (invalid) {
    const notYet = pair.cert.notBefore.getTime() > now.getTime();
    return {
      ...notReady(ReadinessReasons.ErrInvalidKeyPair, GET_KEY_PAIR_PREFIX + invalid),
      ...(notYet ? { changesAt: pair.cert.notBefore } : {}),
    };
  }
  return {
    ready: true,
    reason: ReadinessReasons.KeyPairVerified,
    message: KEY_PAIR_VERIFIED_MESSAGE,
    changesAt: pair.cert.notAfter,
  };
}

export async function issuerReadiness(ctx: ControllerContext, handle: IssuerHandle): Promise<Readiness> {
  const invalid = specErrors(handle);
  if (invalid) return notReady(ReadinessReasons.InvalidIssuer, `Issuer spec is invalid: ${invalid}`);
  const type = issuerType(handle.issuer.spec);
  switch (type) {
    case 'selfsigned':
      return { ready: true, reason: ReadinessReasons.IsReady, message: '' };
    case 'ca':
      return caReadiness(ctx, handle);
    case 'acme':
      return acmeReadiness(ctx, handle);
    default:
      return notReady(
        ReadinessReasons.ErrInitIssuer,
        `Error initializing issuer: the ${type ?? 'configured'} issuer type is not implemented by certkit`,
      );
  }
}
