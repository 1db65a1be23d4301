/**
 * Orders certificates into one chain and splits it into what a Secret stores, as cert-manager's
 * ParseSingleCertificateChain does: `tls.crt` gets the leaf and intermediates, `ca.crt` the top of the chain.
 */

import { createPublicKey, type KeyObject } from 'node:crypto';
import { verifySignature } from './algorithms.ts';
import { certificatePem, type DecodedCertificate } from './certificate-der.ts';
import { decodeBasicConstraints, ExtensionOid, findExtension } from './extensions.ts';
import { decodeKeyUsage } from './usages.ts';

const CERT_SIGN_BIT = 1 << 5;

/**
 * The parent half of Go's CheckSignatureFrom: a v3 parent needs CA basic constraints, and a KeyUsage, if
 * present, needs certSign. Names are not compared here.
 */
function mayIssue(parent: DecodedCertificate): boolean {
  const bc = findExtension(parent.extensions, ExtensionOid.basicConstraints);
  if (parent.version === 3 && !bc) return false;
  if (bc && !decodeBasicConstraints(bc.value).isCA) return false;
  const ku = findExtension(parent.extensions, ExtensionOid.keyUsage);
  if (ku) {
    const mask = decodeKeyUsage(ku.value);
    if (mask !== 0 && !(mask & CERT_SIGN_BIT)) return false;
  }
  return true;
}

function signatureVerifies(child: DecodedCertificate, key: KeyObject): boolean {
  try {
    return verifySignature(child.signatureAlgorithmOid, child.tbs, key, child.signature);
  } catch {
    return false;
  }
}

export interface PemBundle {
  /** Leaf first, then intermediates; a self-signed root is left out unless it is the only certificate. */
  chainPem: string;
  /** The root, or the highest certificate when the chain has no root; empty for a lone non-root certificate. */
  caPem: string;
}

const MAX_CERTIFICATES = 1000;

/**
 * Signature checks an ordering may make, per certificate given (plus a few). A certificate is checked against
 * every other one whose subject is its issuer, so certificates sharing one subject cost a check per pair:
 * 1,000 self-signed CA certificates named alike in a CA Secret (half a megabyte) took 76 s of CPU, with the
 * event loop held all along. A real chain needs about one check per certificate (a few more where a CA was
 * re-keyed under the same name), so a budget linear in the count refuses only such sets, in time linear in
 * the Secret's size.
 */
const SIGNATURE_CHECKS_PER_CERTIFICATE = 2;
const EXTRA_SIGNATURE_CHECKS = 16;

/** One chain, leaf first, and whether its top certificate is a self-signed root. */
export interface OrderedChain {
  chain: DecodedCertificate[];
  topIsRoot: boolean;
}

/**
 * Orders the single chain `certs` form (in any order, duplicates allowed), or throws if they do not form one.
 * `signedBy` maps a child to the parent whose key the caller has just signed it with: that one signature is
 * taken as valid rather than verified again (the parent's constraints are still checked).
 */
export function orderChain(
  certs: readonly DecodedCertificate[],
  signedBy?: ReadonlyMap<DecodedCertificate, DecodedCertificate>,
): OrderedChain {
  const unique = [...new Map(certs.map((cert) => [cert.der.toString('base64'), cert])).values()];
  if (unique.length === 0) throw new Error('no certificates given');
  if (unique.length > MAX_CERTIFICATES) {
    throw new Error('certificate chain is too long, must be less than 1000 certificates');
  }
  // Each certificate's key is parsed once per call: a parent is tried against several children, and the root
  // against itself, and parsing a key costs a good part of a verification.
  const keys = new Map<DecodedCertificate, KeyObject | null>();
  const keyOf = (cert: DecodedCertificate): KeyObject | null => {
    let key = keys.get(cert);
    if (key === undefined) {
      try {
        key = createPublicKey({ key: cert.publicKeyInfo, format: 'der', type: 'spki' });
      } catch {
        key = null;
      }
      keys.set(cert, key);
    }
    return key;
  };
  const maxChecks = SIGNATURE_CHECKS_PER_CERTIFICATE * unique.length + EXTRA_SIGNATURE_CHECKS;
  let checks = 0;
  // Go's CheckSignatureFrom.
  const signs = (child: DecodedCertificate, parent: DecodedCertificate): boolean => {
    if (!mayIssue(parent)) return false;
    if (signedBy?.get(child) === parent) return true;
    const key = keyOf(parent);
    if (key === null) return false;
    if (++checks > maxChecks) {
      throw new Error(
        `certificate chain is malformed or broken: ordering its ${unique.length} certificates takes more than ` +
          `${maxChecks} signature checks (too many of them share a subject)`,
      );
    }
    return signatureVerifies(child, key);
  };
  const issuedBy = (child: DecodedCertificate, parent: DecodedCertificate) =>
    child.issuer.equals(parent.subject) && signs(child, parent);
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
  return { chain, topIsRoot: signs(top, top) };
}

/** What a Secret stores of an ordered chain. */
export function pemBundleOf({ chain, topIsRoot }: OrderedChain): PemBundle {
  const top = chain[chain.length - 1];
  if (chain.length === 1) {
    const pem = certificatePem(top);
    return { chainPem: pem, caPem: topIsRoot ? pem : '' };
  }
  const served = topIsRoot ? chain.slice(0, -1) : chain;
  return { chainPem: served.map(certificatePem).join(''), caPem: certificatePem(top) };
}

/** The single chain `certs` form, split as a Secret stores it; throws if they do not form one. */
export function buildPemBundle(
  certs: readonly DecodedCertificate[],
  signedBy?: ReadonlyMap<DecodedCertificate, DecodedCertificate>,
): PemBundle {
  return pemBundleOf(orderChain(certs, signedBy));
}
