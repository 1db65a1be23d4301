import type { ServerOptions } from 'node:https';
import { DEFAULT_CIPHERS } from 'node:tls';

/**
 * TLS 1.2 suites as kube-apiserver's secure defaults allow them: ECDHE key exchange with an AEAD cipher only
 * (AES-GCM, ChaCha20-Poly1305). No CBC suite (Lucky13-style padding oracles) and none with SHA-1 MACs, both of
 * which OpenSSL's (and so Node's) default list still offers through `HIGH`.
 */
const TLS12_SUITES = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];

/** TLS 1.3's suites are all AEAD: Node's own choice of them stands. */
const TLS13_SUITES = DEFAULT_CIPHERS.split(':').filter((suite) => suite.startsWith('TLS_'));

export const SERVING_CIPHERS = [...TLS13_SUITES, ...TLS12_SUITES].join(':');

export interface ServingTls {
  /** PEM: the serving certificate, then any intermediates. */
  cert: string;
  key: string;
  /** PEM bundle of CAs whose client certificates authenticate (--client-ca-file). */
  clientCa?: string;
}

/** Options of the HTTPS server: the certificate, kube-apiserver's protocol floor and suites, client certificates. */
export function servingTlsOptions(tls: ServingTls): ServerOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    minVersion: 'TLSv1.2',
    ciphers: SERVING_CIPHERS,
    // As kube-apiserver (tls.RequestClientCert): a certificate is asked for but not required, since tokens
    // authenticate too; one that does not verify against the CA authenticates nobody (the request may still
    // carry a token).
    ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: false } : {}),
  };
}
