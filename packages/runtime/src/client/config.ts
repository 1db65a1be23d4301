/**
 * Where the API server is and how to authenticate to it: what a kubeconfig or the in-cluster service account
 * resolves to, and what the transport needs to make requests (client-go's rest.Config, reduced to the parts
 * we use).
 */

/** What a request authenticates with. A client certificate and a token may both be present. */
export interface Credentials {
  /** Bearer token for the Authorization header. */
  token?: string;
  /** PEM client certificate (chain) and its private key, presented in the TLS handshake. */
  cert?: string;
  key?: string;
}

/**
 * A source of credentials that may change over time: a token file that rotates, an exec plugin whose
 * output expires. The transport asks before every request, so `get()` must be cheap when nothing changed
 * (cache inside), and returns the same object for as long as the credentials are unchanged.
 */
export interface CredentialProvider {
  /** The credentials to send now (cheap when nothing changed). */
  get(signal?: AbortSignal): Promise<Credentials>;
  /**
   * The server answered 401 to a request made with `used`: drop them if they are still the current ones, so
   * the next `get()` fetches fresh ones (client-go's exec authenticator `maybeRefreshCredentials`).
   */
  invalidate?(used: Credentials): void;
}

/**
 * Where the API server is and how to reach it: URL, TLS trust and client certificate, credentials, proxy,
 * default namespace.
 */
export interface ClientConfig {
  /**
   * API server URL, e.g. `https://10.0.0.1:6443`; a path (`https://host/k8s/clusters/c1`) prefixes every
   * request.
   */
  server: string;
  /** PEM CA bundle to trust instead of the system roots. */
  ca?: string;
  /** Skip verification of the server's certificate (kubeconfig `insecure-skip-tls-verify`). */
  insecureSkipTlsVerify?: boolean;
  /** Name to verify the server's certificate against and send as SNI, when it differs from the URL's host. */
  tlsServerName?: string;
  /** Static credentials. */
  token?: string;
  cert?: string;
  key?: string;
  /**
   * Dynamic credentials (token file, exec plugin). What they return wins, field by field, over the static
   * token, cert and key above (an exec plugin may return only a token while the kubeconfig holds a cert).
   */
  credentials?: CredentialProvider;
  /**
   * An HTTP(S) proxy for every request (kubeconfig `proxy-url`). Without it, HTTPS_PROXY / HTTP_PROXY and
   * NO_PROXY decide, as for client-go.
   */
  proxyUrl?: string;
  /** The namespace of the kubeconfig context or of the service account, `default` when none says. */
  namespace?: string;
}

/** A provider that always answers with the same credentials. */
export function staticCredentials(credentials: Credentials): CredentialProvider {
  const frozen = Object.freeze({ ...credentials });
  return { get: async () => frozen };
}
