/**
 * Orders certificates into one chain and splits it into what a Secret stores, as cert-manager's
 * ParseSingleCertificateChain does: `tls.crt` gets the leaf and intermediates, `ca.crt` the top of the chain.
 */

import { verifySignature } from './algorithms.ts';
import { certificatePem, type DecodedCertificate } from './certificate-der.ts';
import { decodeBasicConstraints, ExtensionOid, findExtension } from './extensions.ts';
import { decodeKeyUsage } from './usages.ts';

const CERT_SIGN_BIT = 1 << 5;

/**
 * Go's CheckSignatureFrom: `parent` may sign certificates (a v3 parent needs CA basic constraints; a
 * KeyUsage, if present, needs certSign) and its key verifies `child`'s signature. Names are not compared.
 */
export function checkSignatureFrom(child: DecodedCertificate, parent: DecodedCertificate): boolean {
  const bc = findExtension(parent.extensions, ExtensionOid.basicConstraints);
  if (parent.version === 3 && !bc) return false;
  if (bc && !decodeBasicConstraints(bc.value).isCA) return false;
  const ku = findExtension(parent.extensions, ExtensionOid.keyUsage);
  if (ku) {
    const mask = decodeKeyUsage(ku.value);
    if (mask !== 0 && !(mask & CERT_SIGN_BIT)) return false;
  }
  try {
    return verifySignature(child.signatureAlgorithmOid, child.tbs, parent.publicKeyInfo, child.signature);
  } catch {
    return false;
  }
}

/** Signed by itself, in the CheckSignatureFrom sense: a root CA. */
export function isSelfSigned(cert: DecodedCertificate): boolean {
  return checkSignatureFrom(cert, cert);
}

function issuedBy(child: DecodedCertificate, parent: DecodedCertificate): boolean {
  return child.issuer.equals(parent.subject) && checkSignatureFrom(child, parent);
}

export interface PemBundle {
  /** Leaf first, then intermediates; a self-signed root is left out unless it is the only certificate. */
  chainPem: string;
  /** The root, or the highest certificate when the chain has no root; empty for a lone non-root certificate. */
  caPem: string;
}

const MAX_CERTIFICATES = 1000;

/** Builds the single chain `certs` form (in any order, duplicates allowed), or throws if they do not form one. */
export function buildPemBundle(certs: readonly DecodedCertificate[]): PemBundle {
  const unique = [...new Map(certs.map((cert) => [cert.der.toString('base64'), cert])).values()];
  if (unique.length === 0) throw new Error('no certificates given');
  if (unique.length > MAX_CERTIFICATES) {
    throw new Error('certificate chain is too long, must be less than 1000 certificates');
  }
  const parents = new Map(
    unique.map((cert) => [cert, unique.find((other) => other !== cert && issuedBy(cert, other))]),
  );
  const hasChild = new Set([...parents.values()].filter((parent) => parent !== undefined));
  const leaves = unique.filter((cert) => !hasChild.has(cert));
  const broken = new Error('certificate chain is malformed or broken');
  if (leaves.length !== 1) throw broken;
  const chain: DecodedCertificate[] = [];
  for (let cert: DecodedCertificate | undefined = leaves[0]; cert; cert = parents.get(cert)) {
    if (chain.includes(cert)) throw broken;
    chain.push(cert);
  }
  if (chain.length !== unique.length) throw broken;

  const top = chain[chain.length - 1];
  const topIsRoot = isSelfSigned(top);
  if (chain.length === 1) {
    const pem = certificatePem(top);
    return { chainPem: pem, caPem: topIsRoot ? pem : '' };
  }
  const served = topIsRoot ? chain.slice(0, -1) : chain;
  return { chainPem: served.map(certificatePem).join(''), caPem: certificatePem(top) };
}
