import type { Result } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { SecretKeys } from '../../../api/constants.ts';
import type { ControllerContext, SecretGetter } from '../../context.ts';
import { secretCertificateDigest } from '../../parsed.ts';
import { digestToken, type DigestToken } from '../../request-facts.ts';

/**
 * The issued Secrets this process has written and its Secret cache may not show yet: client-go's
 * "expectations", for the certificate in a Secret (docs/adr/1181).
 *
 * The issuing controller writes the new certificate to the Secret and then the Certificate's status (the new
 * revision, Issuing gone). The trigger and readiness judge that status against the cached Secret: seen with
 * the previous certificate (or none), the trigger would issue again and readiness would write a Ready it must
 * take back. The issuing controller used to hold its worker until the cache showed the Secret (ADR 0020's
 * write, ADR 1015); at scale that wait was half of its completing reconcile and its five workers paced the
 * whole issuance (ADR 1180). Instead it records here what it wrote, as the write's answer tells, and goes on
 * at once; the readers of the Secret stand aside while their cache does not show it yet. They need not poll:
 * the Secret's own event, which the informer delivers once its store holds the new object, wakes every one
 * of them (index.ts), and the requeue they return covers a write the cache never shows (the Secret changed or
 * deleted at once by someone else), after which they go on as the old wait's timeout did.
 *
 * Bounded: an entry goes when the Secret's event shows the write, when a reader finds it shown (the event may
 * have come before the write's answer was recorded; the readers the status write wakes then find it) or
 * lapsed, and lapsed ones are swept as new ones come; a few moments' worth of issuances at most.
 */

/**
 * How long readers wait for the cache to show a write: client-go's ExpectationsTimeout (5 minutes). It only
 * bounds a write the cache never shows; the wait ends with the Secret's event in every other case. It must
 * outlast an outage of the API server: a write answered just before the server went down may reach the cache
 * only after it is back and the Secret informer has relisted, and a lapsed expectation let the trigger judge the
 * Certificate's new revision by the Secret as it was, and issue it again (docs/adr/1200).
 */
export const OWN_SECRET_WRITE_WAIT_MS = 5 * 60_000;
/** Past this many entries, lapsed ones are swept on the next write. */
const SWEEP_ABOVE = 256;

interface Expectation {
  /** The digest of the tls.crt written, or undefined when the Secret was written without one. */
  certificate: DigestToken | undefined;
  /** Date.now() after which the expectation lapses. */
  deadline: number;
}

export class OwnSecretWrites {
  readonly #pending = new Map<string, Expectation>();

  /** Records that the Secret now holds `tlsCrt` (PEM; undefined: no tls.crt) as of a write just answered. */
  wrote(namespace: string, name: string, tlsCrt: string | undefined, now = Date.now()): void {
    if (this.#pending.size > SWEEP_ABOVE) this.#sweep(now);
    this.#pending.set(keyOf(namespace, name), {
      certificate: tlsCrt === undefined ? undefined : digestToken(tlsCrt),
      deadline: now + OWN_SECRET_WRITE_WAIT_MS,
    });
  }

  /** Whether anything is expected of this Secret: a Map lookup, so readers pay nothing otherwise. */
  expects(namespace: string, name: string): boolean {
    return this.#pending.has(keyOf(namespace, name));
  }

  /**
   * How many ms more a reader should stand aside, given the Secret as its cache holds it: undefined once the
   * cache shows the write or the expectation lapsed (both forget it).
   */
  pendingMs(
    namespace: string,
    name: string,
    cached: Secret | undefined,
    now = Date.now(),
  ): number | undefined {
    const key = keyOf(namespace, name);
    const expected = this.#pending.get(key);
    if (!expected) return undefined;
    if (now >= expected.deadline || shows(cached, expected)) {
      this.#pending.delete(key);
      return undefined;
    }
    return expected.deadline - now;
  }

  /** A Secret event: the write is forgotten once the cache shows it. */
  observed(secret: Secret): void {
    const key = keyOf(secret.metadata?.namespace ?? '', secret.metadata?.name ?? '');
    const expected = this.#pending.get(key);
    if (expected && shows(secret, expected)) this.#pending.delete(key);
  }

  get size(): number {
    return this.#pending.size;
  }

  #sweep(now: number): void {
    for (const [key, expected] of this.#pending) if (now >= expected.deadline) this.#pending.delete(key);
  }
}

/** The cache holds a certificate Secret as facts, with the digest of its tls.crt (docs/adr/1140). */
function shows(cached: Secret | undefined, expected: Expectation): boolean {
  return expected.certificate === undefined
    ? cached?.data?.[SecretKeys.tlsCert] === undefined
    : secretCertificateDigest(cached) === expected.certificate;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/** Per Secret getter (one per controller context), its writes' expectations, fed by its events. */
const bySecretGetter = new WeakMap<SecretGetter, OwnSecretWrites>();

function ownSecretWrites(ctx: ControllerContext): OwnSecretWrites {
  let writes = bySecretGetter.get(ctx.secrets);
  if (!writes) {
    const created = new OwnSecretWrites();
    writes = created;
    bySecretGetter.set(ctx.secrets, created);
    ctx.secrets.onChange((secret) => {
      if (created.size) created.observed(secret as Secret);
    });
  }
  return writes;
}

/** The issuing controller wrote `tlsCrt` to the Secret: readers wait for their cache to show it. */
export function expectOwnSecretWrite(
  ctx: ControllerContext,
  namespace: string,
  name: string,
  tlsCrt: string | undefined,
): void {
  ownSecretWrites(ctx).wrote(namespace, name, tlsCrt);
}

/**
 * For a reconcile about to judge the Secret from its cache: a requeue while the cache does not yet show this
 * process's last write to it (the Secret's event wakes the reconcile sooner), undefined when it does or
 * nothing is expected (no cache read then).
 */
export async function awaitingOwnSecretWrite(
  ctx: ControllerContext,
  namespace: string,
  name: string,
): Promise<Result | undefined> {
  const writes = bySecretGetter.get(ctx.secrets);
  if (!writes?.expects(namespace, name)) return undefined;
  const ms = writes.pendingMs(namespace, name, await ctx.secrets.get(namespace, name));
  return ms === undefined ? undefined : { requeueAfter: ms };
}
