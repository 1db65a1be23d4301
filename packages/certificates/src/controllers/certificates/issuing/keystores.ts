import { isNotFound } from '@certkit/apimachinery';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { SecretKeys } from '../../../api/constants.ts';
import type { Certificate, JKSKeystore, PKCS12Keystore } from '../../../api/types.ts';
import { encodeJksKeystore, encodeJksTruststore } from '../../../pki/jks.ts';
import { parsePrivateKey } from '../../../pki/keys.ts';
import { decodePemBlocks } from '../../../pki/pem.ts';
import { encodePkcs12Keystore, encodePkcs12Truststore } from '../../../pki/pkcs12.ts';
import type { ControllerContext } from '../../context.ts';
import { ISSUING_CONTROLLER } from './controller-name.ts';
import { hasSecretBytes, secretBytes } from '../../parsed.ts';

/**
 * spec.keystores: `keystore.jks` / `truststore.jks` and `keystore.p12` / `truststore.p12` in the issued Secret,
 * as cert-manager's issuing controller writes them (issuing/internal/secret.go setKeystores, keystore.go).
 *
 * - At issuance every wanted keystore is encoded afresh, with the password read then.
 * - Between issuances cert-manager checks presence only (policies SecretKeystoreFormatMismatch): a wanted
 *   keystore that is missing (or its truststore, when the Secret has a ca.crt) is written, one no longer
 *   wanted is removed, and one that is there is left alone. So a changed password or profile takes effect at
 *   the next issuance, as in cert-manager, and the password Secret is not read on every reconcile.
 * - The truststore holds ca.crt and exists only when there is one.
 */

export type KeystoreFormat = 'jks' | 'pkcs12';

const FORMATS: readonly KeystoreFormat[] = ['jks', 'pkcs12'];

const DATA_KEYS: Record<KeystoreFormat, { keystore: string; truststore: string }> = {
  jks: { keystore: SecretKeys.jksKeystore, truststore: SecretKeys.jksTruststore },
  pkcs12: { keystore: SecretKeys.pkcs12Keystore, truststore: SecretKeys.pkcs12Truststore },
};

const FORMAT_NAMES: Record<KeystoreFormat, string> = { jks: 'JKS', pkcs12: 'PKCS12' };

/** The JKS alias cert-manager uses when spec.keystores.jks.alias is unset. */
export const DEFAULT_JKS_ALIAS = 'certificate';

/** The password of each keystore format about to be encoded. */
export type KeystorePasswords = Partial<Record<KeystoreFormat, string>>;

/** The Secret contents keystores are made of, as PEM text. */
export interface KeystoreSource {
  privateKey: string;
  certificate: string;
  ca?: string;
}

function wanted(cert: Certificate, format: KeystoreFormat): JKSKeystore | PKCS12Keystore | undefined {
  const spec = cert.spec.keystores?.[format];
  return spec?.create ? spec : undefined;
}

/**
 * The formats to encode now: at issuance every wanted one; otherwise the wanted ones whose keystore is
 * missing from `secret`, or whose truststore is while the Secret has a CA.
 */
export function keystoresToWrite(
  cert: Certificate,
  secret: Secret | undefined,
  issuing: boolean,
): KeystoreFormat[] {
  return FORMATS.filter((format) => {
    if (!wanted(cert, format)) return false;
    if (issuing) return true;
    const keys = DATA_KEYS[format];
    const has = (key: string) => hasSecretBytes(secret, key);
    return !has(keys.keystore) || (has(SecretKeys.ca) && !has(keys.truststore));
  });
}

/** A keystore that cannot be made: its reason is the Warning event's. */
export class KeystoreError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = 'KeystoreError';
    this.reason = reason;
  }
}

/**
 * Reads the passwords of `formats`: the literal `password`, or the key of `passwordSecretRef` (a Secret in the
 * Certificate's namespace, through the Secret getter: a live GET unless it is labelled for the cache).
 */
export async function keystorePasswords(
  ctx: ControllerContext,
  cert: Certificate,
  formats: readonly KeystoreFormat[],
): Promise<KeystorePasswords> {
  const passwords: KeystorePasswords = {};
  for (const format of formats) {
    const spec = wanted(cert, format);
    if (!spec) continue;
    const name = FORMAT_NAMES[format];
    const ref = spec.passwordSecretRef;
    if (ref?.name) {
      const secret = await ctx.secrets
        .getWithData(cert.metadata.namespace ?? '', ref.name)
        .catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
      if (!secret) {
        throw new KeystoreError(
          'KeystorePasswordSecretNotFound',
          `${name} keystore password Secret "${ref.name}" not found`,
        );
      }
      const bytes = secretBytes(secret, ref.key ?? '');
      if (!bytes) {
        throw new KeystoreError(
          'KeystorePasswordSecretInvalid',
          `${name} keystore password Secret "${ref.name}" contains no data for key "${ref.key ?? ''}"`,
        );
      }
      passwords[format] = bytes.toString('utf8');
    } else if (spec.password) {
      passwords[format] = spec.password;
    } else {
      // Admission refuses this; a Certificate that got past another server's webhook still gets an answer.
      throw new KeystoreError(
        'KeystorePasswordMissing',
        `either passwordSecretRef or password must be set for ${name} keystore`,
      );
    }
  }
  return passwords;
}

function certificateDers(pem: string | undefined): Buffer[] {
  if (!pem) return [];
  return decodePemBlocks(pem)
    .filter((block) => block.type === 'CERTIFICATE')
    .map((block) => block.der);
}

/**
 * Brings the keystore keys of `data` (base64 values) in line with the spec: encodes the formats in
 * `passwords`, removes the formats not wanted, and leaves the others as they are.
 */
export function applyKeystores(
  data: Record<string, string>,
  cert: Certificate,
  source: KeystoreSource,
  passwords: KeystorePasswords,
): void {
  for (const format of FORMATS) {
    const keys = DATA_KEYS[format];
    if (!wanted(cert, format)) {
      delete data[keys.keystore];
      delete data[keys.truststore];
      continue;
    }
    const password = passwords[format];
    if (password === undefined) continue;
    let encoded: { keystore: Buffer; truststore?: Buffer };
    try {
      encoded = encode(format, cert, source, password);
    } catch (err) {
      // cert-manager's wording: "error encoding JKS bundle: …".
      throw new KeystoreError(
        'KeystoreEncodingFailed',
        `error encoding ${FORMAT_NAMES[format]} bundle: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    data[keys.keystore] = encoded.keystore.toString('base64');
    if (encoded.truststore) data[keys.truststore] = encoded.truststore.toString('base64');
    else delete data[keys.truststore];
  }
}

function encode(
  format: KeystoreFormat,
  cert: Certificate,
  source: KeystoreSource,
  password: string,
): { keystore: Buffer; truststore?: Buffer } {
  const key = parsePrivateKey(source.privateKey);
  const chain = certificateDers(source.certificate);
  const cas = certificateDers(source.ca);
  if (chain.length === 0) throw new Error('tls.crt holds no certificate');
  if (format === 'jks') {
    const alias = cert.spec.keystores?.jks?.alias || DEFAULT_JKS_ALIAS;
    return {
      keystore: encodeJksKeystore(password, alias, key, chain, cas),
      truststore: cas.length ? encodeJksTruststore(password, cas) : undefined,
    };
  }
  const profile = cert.spec.keystores?.pkcs12?.profile || 'LegacyRC2';
  return {
    keystore: encodePkcs12Keystore(profile, password, key, chain, cas),
    truststore: cas.length ? encodePkcs12Truststore(profile, password, cas) : undefined,
  };
}

/**
 * Runs `fn`; a KeystoreError (cert-manager emits KeystorePasswordSecretNotFound; the other reasons are ours)
 * becomes a Warning event on the Certificate before it fails the reconcile, which is retried with backoff.
 */
export async function warnOnKeystoreError<T>(
  ctx: ControllerContext,
  cert: Certificate,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof KeystoreError)
      ctx.recorder.from(ISSUING_CONTROLLER).warning(cert, err.reason, err.message);
    throw err;
  }
}
