/**
 * What an ACME request that failed TLS certificate verification says. Node's own text for an untrusted chain
 * ends with advice for Node users ("try running Node.js with --use-system-ca"), which a certkit user cannot
 * act on; what they can change is the Issuer's `caBundle` (or `skipTLSVerify`). The text becomes the
 * Issuer's Ready condition (`Failed to register ACME account: …`): Go's words, which cert-manager shows there
 * (and users search for), then Node's description, then what to change.
 */

/** OpenSSL's verification results (as Node's `err.code`) that mean: no trusted CA signed this chain. */
const UNTRUSTED_CHAIN = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

const NODE_ADVICE = /; if the root CA is installed locally, try running Node\.js with --use-system-ca$/;

/**
 * The message for a request's failure `cause`, when it is an untrusted certificate chain; undefined for any
 * other failure, whose own message stands. `caBundle`: whether the Issuer gives one.
 */
export function untrustedChainMessage(cause: unknown, caBundle: boolean): string | undefined {
  const code = (cause as { code?: unknown } | null)?.code;
  if (!(cause instanceof Error) || typeof code !== 'string' || !UNTRUSTED_CHAIN.has(code)) return undefined;
  const what = `tls: failed to verify certificate: x509: certificate signed by unknown authority (${cause.message.replace(NODE_ADVICE, '')})`;
  return caBundle
    ? `${what}: spec.acme.caBundle does not hold the CA that signed the server's certificate`
    : `${what}: give the CA that signed the server's certificate in spec.acme.caBundle`;
}
