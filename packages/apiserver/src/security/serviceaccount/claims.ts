import { randomUUID } from 'node:crypto';

/**
 * The claims of a ServiceAccount token, as kube-apiserver writes them (pkg/serviceaccount/claims.go): the
 * registered ones (iss, sub, aud, exp, iat, nbf, jti) and the private `kubernetes.io` claim naming the
 * ServiceAccount and the object the token is bound to, each with its uid, which authentication checks again.
 */

/** An object a token names: the ServiceAccount, or the Pod or Secret it is bound to. */
export interface ObjectRef {
  name: string;
  uid: string;
}

/** The private claim, under `kubernetes.io`. */
export interface KubernetesClaim {
  namespace: string;
  serviceaccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
}

export interface ServiceAccountClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  'kubernetes.io': KubernetesClaim;
}

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/** A ServiceAccount's user name: `system:serviceaccount:<namespace>:<name>` (serviceaccount.MakeUsername). */
export function serviceAccountUserName(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

/** The groups of every ServiceAccount user: all ServiceAccounts, and those of its namespace. */
export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}

export interface ClaimsInput {
  issuer: string;
  namespace: string;
  serviceAccount: ObjectRef;
  audiences: string[];
  expirationSeconds: number;
  bound?: { kind: 'Pod' | 'Secret'; ref: ObjectRef };
  /** Seconds since the epoch. */
  now: number;
}

/** The claims of a new token: valid from now (iat = nbf) for expirationSeconds, with a fresh jti. */
export function tokenClaims(input: ClaimsInput): ServiceAccountClaims {
  const kubernetes: KubernetesClaim = { namespace: input.namespace, serviceaccount: input.serviceAccount };
  if (input.bound?.kind === 'Pod') kubernetes.pod = input.bound.ref;
  if (input.bound?.kind === 'Secret') kubernetes.secret = input.bound.ref;
  return {
    iss: input.issuer,
    sub: serviceAccountUserName(input.namespace, input.serviceAccount.name),
    aud: input.audiences,
    exp: input.now + input.expirationSeconds,
    iat: input.now,
    nbf: input.now,
    jti: randomUUID(),
    'kubernetes.io': kubernetes,
  };
}

function objectRef(value: unknown): ObjectRef | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { name, uid } = value as Record<string, unknown>;
  return typeof name === 'string' && name !== '' && typeof uid === 'string' && uid !== ''
    ? { name, uid }
    : undefined;
}

/**
 * The `kubernetes.io` claim of a verified token, or undefined when it does not name a ServiceAccount the way
 * tokens of the TokenRequest API do (a token of another kind, or one certkit never issued).
 */
export function kubernetesClaim(payload: Record<string, unknown>): KubernetesClaim | undefined {
  const claim = payload['kubernetes.io'];
  if (claim === null || typeof claim !== 'object') return undefined;
  const { namespace, serviceaccount, pod, secret } = claim as Record<string, unknown>;
  const sa = objectRef(serviceaccount);
  if (typeof namespace !== 'string' || namespace === '' || !sa) return undefined;
  // The subject must be the ServiceAccount the private claim names: one signed token, one identity.
  if (payload.sub !== serviceAccountUserName(namespace, sa.name)) return undefined;
  const result: KubernetesClaim = { namespace, serviceaccount: sa };
  if (pod !== undefined) {
    const ref = objectRef(pod);
    if (!ref) return undefined;
    result.pod = ref;
  }
  if (secret !== undefined) {
    const ref = objectRef(secret);
    if (!ref) return undefined;
    result.secret = ref;
  }
  return result;
}
