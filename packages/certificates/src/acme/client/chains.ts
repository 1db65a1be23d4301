import { parseCertificate } from '../../pki/inspect.ts';
import { decodePemBlocks, encodePem } from '../../pki/pem.ts';

/**
 * cert-manager's preferredChain rule (`getPreferredCertChain` upstream): a chain matches when the issuer
 * common name of its top-most certificate (the last one, the one closest to the root) equals the preferred
 * name. Only the top is looked at, unlike acme-client, which matches an issuer anywhere in the chain.
 */
export function topIssuerCommonName(pemChain: string): string | undefined {
  const certs = decodePemBlocks(pemChain).filter((b) => b.type === 'CERTIFICATE');
  const top = certs.at(-1);
  if (!top) return undefined;
  return parseCertificate(encodePem('CERTIFICATE', top.der)).issuer.commonName;
}

export function chainMatchesPreferred(pemChain: string, preferredChain: string): boolean {
  return topIssuerCommonName(pemChain) === preferredChain;
}
