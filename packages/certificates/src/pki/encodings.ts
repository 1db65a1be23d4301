/**
 * `spec.additionalOutputFormats` (cert-manager's OutputFormatDER / OutputFormatCombinedPEM) and the PEM chain
 * helpers Secrets are assembled with.
 */

import { decodePemBlock, decodePemBlocks, encodePem } from './pem.ts';

export type AdditionalOutputFormat = 'DER' | 'CombinedPEM';

export const DER_KEY = 'key.der';
export const COMBINED_PEM_KEY = 'tls-combined.pem';

const PRIVATE_KEY_PEM_TYPES = ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY'];

/**
 * `key.der`: the DER inside `tls.key`'s PEM, so it follows spec.privateKey.encoding (PKCS#1 or SEC 1 by
 * default, PKCS#8 when asked) rather than always being PKCS#8.
 */
export function privateKeyDer(keyPem: string): Buffer {
  return decodePemBlock(keyPem, PRIVATE_KEY_PEM_TYPES).der;
}

/** `tls-combined.pem`: the key PEM, a newline, then the certificate chain (bytes.Join with "\n"). */
export function combinedPem(keyPem: string, chainPem: string): string {
  return `${keyPem}\n${chainPem}`;
}

/**
 * The extra Secret data keys for `formats` (objects as in the spec, or bare type names). Unknown formats are
 * an error, as in cert-manager.
 */
export function additionalOutputData(
  formats: readonly (AdditionalOutputFormat | { type: string })[] | undefined,
  keyPem: string,
  chainPem: string,
): Record<string, Buffer> {
  const data: Record<string, Buffer> = {};
  for (const format of formats ?? []) {
    const type = typeof format === 'string' ? format : format.type;
    if (type === 'DER') data[DER_KEY] = privateKeyDer(keyPem);
    else if (type === 'CombinedPEM') data[COMBINED_PEM_KEY] = Buffer.from(combinedPem(keyPem, chainPem));
    else throw new Error(`unknown additional output format ${type}`);
  }
  return data;
}

/** The CERTIFICATE blocks of a PEM bundle, each re-armoured on its own, in order. */
export function splitCertificateChain(pem: string | Buffer): string[] {
  return decodePemBlocks(pem)
    .filter((block) => block.type === 'CERTIFICATE')
    .map((block) => encodePem('CERTIFICATE', block.der));
}

/** Concatenates PEM certificates, making sure each ends with a newline. */
export function joinCertificateChain(pems: readonly string[]): string {
  return pems.map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)).join('');
}
