/**
 * What a failed call to the cluster means, in one line a user can act on, in place of the client's raw
 * error ("connect ECONNREFUSED 127.0.0.1:6443", "Unauthorized"): kubectl and cmctl say which server refused
 * and why, and so does every certkit command that talks to a cluster. No imports: main.ts loads this for any
 * command that failed, including the bundled `controller`.
 */

interface ErrorLike {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  cause?: unknown;
  errors?: unknown[];
  status?: { code?: unknown };
}

/** The error itself and every error it wraps (causes, and the attempts of an AggregateError). */
function chain(err: unknown): ErrorLike[] {
  const all: ErrorLike[] = [];
  for (let e = err as ErrorLike | undefined; e && typeof e === 'object'; e = e.cause as ErrorLike) {
    all.push(e);
    for (const inner of e.errors ?? []) all.push(...chain(inner));
  }
  return all;
}

function withCode(err: unknown, test: (code: string) => boolean): ErrorLike | undefined {
  return chain(err).find((e) => typeof e.code === 'string' && test(e.code));
}

/** A 404 with kube's message for a path no resource serves, rather than an object that is not there. */
function isUnservedResource(e: ErrorLike): boolean {
  return (
    e.status?.code === 404 && (e as Error).message === 'the server could not find the requested resource'
  );
}

/**
 * The line for an error of the connection to the API server, or undefined for any other error. `server` is
 * the kubeconfig's URL when the caller knows it, else the address the socket error names.
 */
export function describeConnectionError(err: unknown, server?: string): string | undefined {
  const refused = withCode(err, (c) => c === 'ECONNREFUSED');
  if (refused) {
    const where = server ?? (refused.address ? `${String(refused.address)}:${String(refused.port)}` : '');
    return `the API server${where ? ` at ${where}` : ''} refused the connection: is it running?`;
  }
  const unresolved = withCode(err, (c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN');
  if (unresolved) {
    const host = server ?? (typeof unresolved.hostname === 'string' ? unresolved.hostname : '');
    return `the API server's host${host ? ` in ${host}` : ''} cannot be resolved`;
  }
  const tls = withCode(err, (c) => /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(c));
  if (tls) {
    // Node's own advice (--use-system-ca) does not apply: the trusted CA is the kubeconfig's.
    const reason = String((tls as Error).message ?? tls.code).split(';')[0];
    return `the API server's certificate is not trusted: ${reason} (is the kubeconfig's certificate-authority-data the server's CA?)`;
  }
  const slow = withCode(err, (c) => c === 'ETIMEDOUT');
  if (slow) {
    const where = server ?? (slow.address ? `${String(slow.address)}:${String(slow.port)}` : '');
    return `the API server${where ? ` at ${where}` : ''} did not answer in time (${(slow as Error).message})`;
  }
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `the API server${server ? ` at ${server}` : ''} did not answer in time`;
  }
  if (chain(err).some((e) => (e as Error).name === 'StatusError' && isUnservedResource(e))) {
    // kube's words for a resource the server does not serve: with certkit's commands, cert-manager's CRDs.
    return `${(err as Error).message}: are the cert-manager CRDs installed? (kubectl apply -f deploy/crds.yaml, or run certkit up)`;
  }
  if (chain(err).some((e) => (e as Error).name === 'StatusError' && e.status?.code === 401)) {
    // kubectl's words for a token or client certificate the server does not accept.
    return 'You must be logged in to the server (Unauthorized): the kubeconfig’s credentials were not accepted';
  }
  return undefined;
}
