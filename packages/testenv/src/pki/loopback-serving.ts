import {
  ensureServingCertificates,
  type ServingCertificates,
} from '@certkit/apiserver/security/certificates';

/**
 * A CA and a serving certificate for 127.0.0.1, kept in `dir/pki`, made exactly as the API server makes its
 * own: for tests of clients that bring up a TLS server of their own. Runtime's tests take it from here so that
 * runtime, which sits beside the API server in the layering, never imports it, not even from a test.
 */
export function loopbackServingCertificates(dir: string): Promise<ServingCertificates> {
  return ensureServingCertificates(dir, ['127.0.0.1']);
}
