import { createHash, type KeyObject } from 'node:crypto';
import { isAlreadyExists } from '@certkit/apimachinery';
import type { KubeObject } from '@certkit/apimachinery';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Labels, SecretKeys } from '../../api/constants.ts';
import type { ACMEIssuer, ACMEIssuerStatus } from '../../api/types.ts';
import { AcmeProblemError } from '../../acme/client/problem.ts';
import { decodeEabHmacKey } from '../../acme/client/jws.ts';
import type { AcmeClient } from '../../acme/client/client.ts';
import { encodePrivateKey, generatePrivateKey, parsePrivateKey } from '../../pki/index.ts';
import type { ControllerContext } from '../context.ts';
import { dns01SolverSecretRefs } from './acme-secrets.ts';
import { issuerReadyCondition } from './conditions.ts';
import { resourceNamespace, type IssuerHandle } from './generic.ts';
import type { Readiness } from './readiness.ts';

/**
 * The ACME issuer's setup (cert-manager's `pkg/issuer/acme/setup.go`): the account key from its Secret
 * (generated as RSA 2048 when missing, unless `disableAccountKeyGeneration`), the account registered or found
 * again with that key (with EAB when configured), its contact kept equal to `spec.acme.email`, and
 * `status.acme` {uri, lastRegisteredEmail, lastPrivateKeyHash} written. The client is then put in the
 * context's account registry for the Order and Challenge controllers. A Ready issuer whose recorded server
 * host, email and key hash still match is not asked about again.
 */

export const AcmeIssuerReasons = {
  ACMEAccountRegistered: 'ACMEAccountRegistered',
  ErrRegisterACMEAccount: 'ErrRegisterACMEAccount',
  ErrVerifyACMEAccount: 'ErrVerifyACMEAccount',
  ErrUpdateACMEAccount: 'ErrUpdateACMEAccount',
  InvalidConfig: 'InvalidConfig',
  InvalidURL: 'InvalidURL',
  InvalidSolver: 'InvalidSolver',
} as const;

export const ACME_ACCOUNT_REGISTERED_MESSAGE = 'The ACME account was registered with the ACME server';
const REGISTRATION_FAILED = 'Failed to register ACME account: ';
const VERIFICATION_FAILED = 'Failed to verify ACME account: ';
// Upstream's text has no space after the colon.
const UPDATE_FAILED = 'Failed to update ACME account:';
const NO_KEY_GENERATION =
  "the ACME issuer config has 'disableAccountKeyGeneration' set to true, but the secret was not found: ";

/** Let's Encrypt's retired ACME v1 directories, and their v2 successors. */
const V1_TO_V2: Record<string, string> = {
  'https://acme-v01.api.letsencrypt.org/directory': 'https://acme-v02.api.letsencrypt.org/directory',
  'https://acme-staging.api.letsencrypt.org/directory':
    'https://acme-staging-v02.api.letsencrypt.org/directory',
  'https://acme-v01.api.letsencrypt.org/directory/': 'https://acme-v02.api.letsencrypt.org/directory',
  'https://acme-staging.api.letsencrypt.org/directory/':
    'https://acme-staging-v02.api.letsencrypt.org/directory',
};

/** The account key as cert-manager records it: standard base64 of SHA-256 over the PKCS#1 DER. */
export function accountKeyHash(key: KeyObject): string {
  return createHash('sha256')
    .update(key.export({ type: 'pkcs1', format: 'der' }))
    .digest('base64');
}

type KeyLookup = { key: KeyObject } | { missing: string } | { invalid: string };

async function accountKeyFromSecret(
  ctx: ControllerContext,
  namespace: string,
  name: string,
  dataKey: string,
): Promise<KeyLookup> {
  const secret = await ctx.secrets.getWithData(namespace, name);
  if (!secret) return { missing: `secrets "${name}" not found` };
  const data = secret.data?.[dataKey];
  if (data === undefined) return { invalid: `no data for "${dataKey}" in secret '${namespace}/${name}'` };
  try {
    return { key: parsePrivateKey(Buffer.from(data, 'base64')) };
  } catch (err) {
    return { invalid: (err as Error).message };
  }
}

/**
 * Creates the key Secret (create, never update: a Secret that appeared meanwhile is someone's key, and is
 * read instead). Labelled for the split Secret cache (docs/adr/0010) besides cert-manager's managed-by label.
 */
async function createAccountKeySecret(
  ctx: ControllerContext,
  namespace: string,
  name: string,
  dataKey: string,
): Promise<KeyObject> {
  const key = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
  const secret: Secret & KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      namespace,
      name,
      labels: {
        'app.kubernetes.io/managed-by': 'cert-manager',
        [Labels.partOfCertManagerController]: 'true',
      },
    },
    data: { [dataKey]: Buffer.from(encodePrivateKey(key, 'PKCS1')).toString('base64') },
  };
  try {
    await ctx.secretClient.create(namespace, secret);
    return key;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const existing = await ctx.secretClient.get(namespace, name);
    const data = existing.data?.[dataKey];
    if (data === undefined) throw new Error(`no data for "${dataKey}" in secret '${namespace}/${name}'`);
    return parsePrivateKey(Buffer.from(data, 'base64'));
  }
}

async function eabKey(
  ctx: ControllerContext,
  namespace: string,
  ref: { name: string; key?: string },
): Promise<Uint8Array> {
  const secret = await ctx.secrets.getWithData(namespace, ref.name);
  if (!secret) throw new Error(`secrets "${ref.name}" not found`);
  const data = secret.data?.[ref.key ?? ''];
  if (data === undefined) {
    throw new Error(
      `failed to find external account binding key data in Secret "${ref.name}" at index "${ref.key ?? ''}"`,
    );
  }
  try {
    return decodeEabHmacKey(Buffer.from(data, 'base64').toString('latin1'));
  } catch (err) {
    throw new Error(`failed to decode external account binding key data: ${(err as Error).message}`);
  }
}

/** cert-manager's validateDNSSolvers: each Secret a DNS-01 solver needs must exist and hold its key. */
async function dns01SolverProblems(
  ctx: ControllerContext,
  namespace: string,
  acme: ACMEIssuer,
): Promise<string[]> {
  const problems: string[] = [];
  for (const ref of dns01SolverSecretRefs(acme)) {
    const secret = await ctx.secrets.getWithData(namespace, ref.name);
    if (!secret) {
      problems.push(`failed to get secret "${ref.name}": secrets "${ref.name}" not found`);
    } else if (ref.key && secret.data?.[ref.key] === undefined) {
      problems.push(`the secret "${ref.name}" does not have key "${ref.key}"`);
    }
  }
  return problems;
}

function contactFor(email: string): string[] {
  return email ? [`mailto:${email.toLowerCase()}`] : [];
}

/** The TLS roots of the issuer's `caBundle` (base64 of PEM in the object). */
function caBundleOf(acme: ACMEIssuer): Buffer | undefined {
  return typeof acme.caBundle === 'string' && acme.caBundle
    ? Buffer.from(acme.caBundle, 'base64')
    : undefined;
}

/**
 * What cert-manager's ACME Setup records besides the condition: an Event of the condition only for an
 * unparsable URL, a missing EAB key and a failed account update (`event`), and the error it returns, which
 * its issuers controller records as ErrInitIssuer (`initError`), only where it is worth a retry.
 */
interface SetupOutcome {
  event?: boolean;
  initError?: string;
}

function notReady(
  reason: string,
  message: string,
  acme: ACMEIssuerStatus,
  retry: boolean,
  outcome: SetupOutcome = {},
): Readiness {
  return {
    ready: false,
    reason,
    message,
    acme,
    retry,
    event: outcome.event ?? false,
    ...(outcome.initError === undefined ? {} : { initError: outcome.initError }),
  };
}

export async function acmeReadiness(ctx: ControllerContext, handle: IssuerHandle): Promise<Readiness> {
  const readiness = await setUpAccount(ctx, handle);
  // An issuer that is not ready has no client: Orders wait rather than use an account in doubt.
  if (!readiness.ready) ctx.acmeAccounts.remove(handle.issuer.metadata?.uid ?? '');
  return readiness;
}

async function setUpAccount(ctx: ControllerContext, handle: IssuerHandle): Promise<Readiness> {
  const { issuer } = handle;
  const acme = issuer.spec.acme as ACMEIssuer;
  const status: ACMEIssuerStatus = { ...issuer.status?.acme };

  const v2 = V1_TO_V2[acme.server];
  if (v2) {
    return notReady(
      AcmeIssuerReasons.InvalidConfig,
      `Your ACME server URL is set to a v1 endpoint (${acme.server}). You should update the spec.acme.server field to "${v2}"`,
      status,
      false,
    );
  }

  const namespace = resourceNamespace(ctx, handle);
  const keyRef = acme.privateKeySecretRef;
  const dataKey = keyRef.key || SecretKeys.tlsKey;
  let key: KeyObject;
  const lookup = await accountKeyFromSecret(ctx, namespace, keyRef.name, dataKey);
  if ('missing' in lookup) {
    if (acme.disableAccountKeyGeneration === true) {
      return notReady(
        AcmeIssuerReasons.ErrVerifyACMEAccount,
        VERIFICATION_FAILED + NO_KEY_GENERATION + lookup.missing,
        status,
        true,
        { initError: VERIFICATION_FAILED + NO_KEY_GENERATION + lookup.missing },
      );
    }
    try {
      key = await createAccountKeySecret(ctx, namespace, keyRef.name, dataKey);
    } catch (err) {
      const message = REGISTRATION_FAILED + (err as Error).message;
      return notReady(AcmeIssuerReasons.ErrRegisterACMEAccount, message, status, true, {
        initError: message,
      });
    }
    // A new key is a new account.
    delete status.uri;
  } else if ('invalid' in lookup) {
    return notReady(
      AcmeIssuerReasons.ErrVerifyACMEAccount,
      `Account private key is invalid: ${lookup.invalid}`,
      status,
      false,
    );
  } else {
    key = lookup.key;
  }
  if (key.asymmetricKeyType !== 'rsa') {
    return notReady(
      AcmeIssuerReasons.ErrVerifyACMEAccount,
      `ACME private key in "${keyRef.name}" is not of type RSA`,
      status,
      false,
    );
  }

  const solverProblems = await dns01SolverProblems(ctx, namespace, acme);
  if (solverProblems.length) {
    return notReady(AcmeIssuerReasons.InvalidSolver, solverProblems.join('; '), status, false);
  }

  const hash = accountKeyHash(key);
  const uid = issuer.metadata?.uid ?? '';

  let serverHost: string;
  try {
    serverHost = new URL(acme.server).host;
  } catch (err) {
    return notReady(
      AcmeIssuerReasons.InvalidURL,
      `Failed to parse existing ACME server URI "${acme.server}": ${(err as Error).message}`,
      status,
      false,
      { event: true },
    );
  }
  let accountHost = '';
  if (status.uri) {
    try {
      accountHost = new URL(status.uri).host;
    } catch (err) {
      return notReady(
        AcmeIssuerReasons.InvalidURL,
        `Failed to parse existing ACME account URI "${status.uri}": ${(err as Error).message}`,
        status,
        false,
        { event: true },
      );
    }
  }

  const email = acme.email ?? '';
  const clientOptions = {
    server: acme.server,
    privateKey: key,
    caBundle: caBundleOf(acme),
    skipTLSVerify: acme.skipTLSVerify === true,
  };
  const wasReady = issuerReadyCondition(issuer)?.status === 'True';
  if (
    wasReady &&
    status.uri &&
    accountHost === serverHost &&
    (status.lastRegisteredEmail ?? '') === email &&
    status.lastPrivateKeyHash === hash
  ) {
    await ctx.acmeAccounts.clientFor(uid, clientOptions, status.uri);
    return ready(status);
  }
  // Only the host is compared: a changed server registers again.
  if (accountHost !== serverHost) delete status.uri;

  let externalAccountBinding: { keyID: string; hmacKey: Uint8Array } | undefined;
  const eab = acme.externalAccountBinding as {
    keyID?: string;
    keySecretRef?: { name: string; key?: string };
  };
  if (eab) {
    try {
      externalAccountBinding = {
        keyID: eab.keyID ?? '',
        hmacKey: await eabKey(ctx, namespace, eab.keySecretRef ?? { name: '' }),
      };
    } catch (err) {
      return notReady(
        AcmeIssuerReasons.ErrRegisterACMEAccount,
        REGISTRATION_FAILED + (err as Error).message,
        status,
        false,
        { event: true },
      );
    }
  }

  const client: AcmeClient = await ctx.acmeAccounts.clientFor(uid, clientOptions);
  let account;
  try {
    ({ account } = await client.registerAccount({
      contact: email ? contactFor(email) : undefined,
      termsOfServiceAgreed: true,
      externalAccountBinding,
    }));
  } catch (err) {
    // A 4xx is not retried, and so not returned: no ErrInitIssuer for it.
    const retry = !(err instanceof AcmeProblemError && err.isClientError);
    return notReady(
      AcmeIssuerReasons.ErrRegisterACMEAccount,
      REGISTRATION_FAILED + (err as Error).message,
      status,
      retry,
      retry ? { initError: (err as Error).message } : {},
    );
  }
  // ensureEmailUpToDate: the account's first contact is what counts.
  let registeredEmail = account.contact?.[0]?.replace('mailto:', '') ?? '';
  if (registeredEmail !== email) {
    try {
      account = await client.updateAccount({ contact: contactFor(email) });
    } catch (err) {
      const retry = !(err instanceof AcmeProblemError && err.isClientError);
      return notReady(
        AcmeIssuerReasons.ErrUpdateACMEAccount,
        UPDATE_FAILED + (err as Error).message,
        status,
        retry,
        { event: true, ...(retry ? { initError: (err as Error).message } : {}) },
      );
    }
    registeredEmail = email;
  }
  return ready({ uri: account.url, lastRegisteredEmail: registeredEmail, lastPrivateKeyHash: hash });
}

function ready(acme: ACMEIssuerStatus): Readiness {
  return {
    ready: true,
    reason: AcmeIssuerReasons.ACMEAccountRegistered,
    message: ACME_ACCOUNT_REGISTERED_MESSAGE,
    acme,
    // cert-manager records no Event for a registered account, only the condition.
    event: false,
  };
}
