import type { StoredObject } from '@certkit/apimachinery';
import { AUTHENTICATED_GROUP, type UserInfo } from '../user.ts';
import {
  type KubernetesClaim,
  kubernetesClaim,
  serviceAccountGroups,
  serviceAccountUserName,
} from './claims.ts';
import { loadJose, type ServiceAccountTokenConfig } from './config.ts';
import type { VerificationKey } from './keys.ts';
import type { ObjectLookup } from './objects.ts';

/**
 * Authenticates ServiceAccount tokens, as kube-apiserver's JWT token authenticator with its validator does
 * (pkg/serviceaccount/jwt.go, claims.go): a token whose unverified issuer is one of ours must carry a valid
 * signature by one of our keys, be within exp/nbf (one minute of leeway, go-jose's), name one of the API
 * audiences, and name a ServiceAccount (and bound Pod or Secret) that still exists with the uid in the token
 * and is not being deleted since more than the leeway. Deleting and recreating the ServiceAccount, which gives
 * it a new uid, invalidates every token issued before.
 */

/** go-jose's DefaultLeeway, which kube-apiserver's exp/nbf checks and deletion grace both use. */
const LEEWAY_SECONDS = 60;
/** How long a verified signature is trusted before it is checked again: kube-apiserver's token success cache TTL. */
const VERIFIED_TTL_MS = 10_000;
/** Bound on the cache of verified tokens; tokens are the clients', so their number is too. */
const MAX_VERIFIED = 4096;
export const CREDENTIAL_ID_EXTRA = 'authentication.kubernetes.io/credential-id';
export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';

/** A token whose signature and claims were verified: who it is, what must still exist, until when. */
interface Verified {
  user: UserInfo;
  claim: KubernetesClaim;
  /** Until when (ms) the verification is reused: the TTL, and never past the token's own expiry. */
  until: number;
}

type Check = boolean | Promise<boolean>;

/** Where the objects a token names are read: the watch cache first (ObjectLookup). */
export type ObjectMetadata = Pick<ObjectLookup, 'metadata'>;

export class ServiceAccountTokenAuthenticator {
  private readonly config: ServiceAccountTokenConfig;
  private readonly objects: ObjectMetadata;
  private readonly now: () => number;
  /**
   * Verified tokens, so that a client sending the same token on every request costs a map lookup and the
   * object checks (from the watch cache), not an RSA verification each time. Insertion-ordered: the oldest
   * entry goes first when it is full.
   */
  private readonly verified = new Map<string, Verified>();
  private readonly keysById: Map<string, VerificationKey>;

  constructor(config: ServiceAccountTokenConfig, objects: ObjectMetadata, now: () => number = Date.now) {
    this.config = config;
    this.objects = objects;
    this.now = now;
    this.keysById = new Map(config.verificationKeys.map((k) => [k.kid, k]));
  }

  /**
   * The token's user, or undefined when it is not a valid ServiceAccount token of this server. Synchronous
   * for a token verified a moment ago whose objects are in the watch cache: the hot path.
   */
  authenticate(token: string): UserInfo | undefined | Promise<UserInfo | undefined> {
    const hit = this.verified.get(token);
    if (hit !== undefined && this.now() < hit.until) {
      const still = this.objectsStillExist(hit.claim);
      if (still === true) return hit.user;
      if (still === false) return this.forget(token);
      return still.then((ok) => (ok ? hit.user : this.forget(token)));
    }
    if (hit !== undefined) this.verified.delete(token);
    // Only something shaped like a JWS goes further: other bearer tokens are no business of this authenticator.
    if (!looksLikeJwt(token)) return undefined;
    return this.verify(token);
  }

  private forget(token: string): undefined {
    this.verified.delete(token);
    return undefined;
  }

  private async verify(token: string): Promise<UserInfo | undefined> {
    const jose = await loadJose();
    let header: { kid?: string };
    let unverified: Record<string, unknown>;
    try {
      header = jose.decodeProtectedHeader(token);
      unverified = jose.decodeJwt(token);
    } catch {
      return undefined;
    }
    // kube-apiserver hands a token to the authenticator of its issuer: someone else's JWT is not ours to judge.
    if (typeof unverified.iss !== 'string' || !this.config.issuers.includes(unverified.iss)) return undefined;
    const named = header.kid === undefined ? undefined : this.keysById.get(header.kid);
    // A token naming one of our keys is checked with it; one naming none, with each (kube tries every key).
    const candidates = named ? [named] : this.config.verificationKeys;
    let payload: Record<string, unknown> | undefined;
    for (const key of candidates) {
      try {
        ({ payload } = await jose.jwtVerify(token, key.key, {
          algorithms: [key.alg],
          issuer: this.config.issuers,
          audience: this.config.apiAudiences,
          clockTolerance: LEEWAY_SECONDS,
          requiredClaims: ['exp', 'sub'],
          currentDate: new Date(this.now()),
        }));
        break;
      } catch (err) {
        // Another key may have signed it; any other failure (expired, wrong audience) is final.
        if ((err as { code?: string }).code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') continue;
        return undefined;
      }
    }
    if (payload === undefined) return undefined;
    const claim = kubernetesClaim(payload);
    if (!claim) return undefined;
    if (!(await this.objectsStillExist(claim))) return undefined;
    const user = serviceAccountUser(claim, typeof payload.jti === 'string' ? payload.jti : undefined);
    this.remember(token, { user, claim, until: this.verifiedUntil(payload.exp as number) });
    return user;
  }

  private verifiedUntil(exp: number): number {
    return Math.min(this.now() + VERIFIED_TTL_MS, (exp + LEEWAY_SECONDS) * 1000);
  }

  private remember(token: string, entry: Verified): void {
    if (this.verified.size >= MAX_VERIFIED) {
      this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(token, entry);
  }

  /** The ServiceAccount, and the object the token is bound to, exist with the token's uids and are not going away. */
  private objectsStillExist(claim: KubernetesClaim): Check {
    const checks: Check[] = [this.matches('serviceaccounts', claim.namespace, claim.serviceaccount)];
    if (claim.secret) checks.push(this.matches('secrets', claim.namespace, claim.secret));
    if (claim.pod) checks.push(this.matches('pods', claim.namespace, claim.pod));
    if (checks.every((c) => c === true)) return true;
    if (checks.some((c) => c === false)) return false;
    return Promise.all(checks.map((c) => Promise.resolve(c))).then((results) => results.every(Boolean));
  }

  private matches(resource: string, namespace: string, ref: { name: string; uid: string }): Check {
    const meta = this.objects.metadata(resource, namespace, ref.name);
    if (meta instanceof Promise) return meta.then((m) => this.sameObject(m, ref.uid));
    return this.sameObject(meta, ref.uid);
  }

  private sameObject(meta: StoredObject['metadata'] | undefined, uid: string): boolean {
    if (meta === undefined || meta.uid !== uid) return false;
    // Deleted objects held by a finalizer still authenticate for the leeway, then no longer.
    const deletion = meta.deletionTimestamp;
    return deletion === undefined || Date.parse(deletion) >= this.now() - LEEWAY_SECONDS * 1000;
  }
}

/** A compact JWS: three base64url parts, the signature non-empty. */
function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  return (
    first > 0 && second > first + 1 && second < token.length - 1 && token.indexOf('.', second + 1) === -1
  );
}

/** The user kube-apiserver makes of a ServiceAccount token (serviceaccount.ServiceAccountInfo.UserInfo). */
export function serviceAccountUser(claim: KubernetesClaim, jti: string | undefined): UserInfo {
  const extra: Record<string, string[]> = {};
  if (claim.pod) {
    extra[POD_NAME_EXTRA] = [claim.pod.name];
    extra[POD_UID_EXTRA] = [claim.pod.uid];
  }
  if (jti) extra[CREDENTIAL_ID_EXTRA] = [`JTI=${jti}`];
  return {
    name: serviceAccountUserName(claim.namespace, claim.serviceaccount.name),
    uid: claim.serviceaccount.uid,
    groups: [...serviceAccountGroups(claim.namespace), AUTHENTICATED_GROUP],
    extra,
  };
}
