import { setTimeout as sleep } from 'node:timers/promises';
// RFC 8555's notBefore/notAfter are RFC 3339; whole seconds in UTC is exactly metav1.Time's text.
import { formatTime } from '@certkit/apimachinery';
import type { AccountKey } from './account-key.ts';
import { chainMatchesPreferred } from './chains.ts';
import { firstHeader, linkTargets, parseRetryAfter } from './headers.ts';
import { externalAccountBinding, signRequest } from './jws.ts';
import type { AcmeAction } from './metrics.ts';
import { NoncePool } from './nonce-pool.ts';
import {
  AcmeErrorType,
  AcmeProblemError,
  AcmeProtocolError,
  type AcmeIdentifier,
  type AcmeProblemDocument,
} from './problem.ts';
import type {
  AcmeAccount,
  AcmeAuthorization,
  AcmeCertificateChain,
  AcmeChallenge,
  AcmeDirectory,
  AcmeOrder,
} from './resources.ts';
import { AcmeTransport, type AcmeHttpResponse, type AcmeTransportOptions } from './transport.ts';

/**
 * An RFC 8555 client for one account on one ACME server: directory, nonces, JWS-signed POSTs, accounts,
 * orders, authorizations, challenges, finalization and certificate download with cert-manager's
 * preferredChain choice. Retries what is safe to retry inside a call: badNonce always (the answer carries a
 * fresh nonce, and Pebble rejects 5 % of good nonces on purpose), 429 and 5xx while the server's Retry-After
 * is short; anything longer comes back as an `AcmeProblemError` with `retryAfter` for the caller's queue.
 */

export interface ExternalAccountBindingInput {
  keyID: string;
  /** The MAC key, decoded (`decodeEabHmacKey` reads cert-manager's Secret format). */
  hmacKey: Uint8Array;
}

export interface RetryPolicy {
  /** Attempts for one request answered with 429 or 5xx, the first included. */
  maxAttempts: number;
  /** The longest Retry-After (or backoff) waited for inside a call; longer ones are returned to the caller. */
  maxWaitMs: number;
  /** Attempts for one request answered with badNonce; high, since each one costs one round trip only. */
  badNonceAttempts: number;
}

export interface AcmeClientOptions extends AcmeTransportOptions {
  directoryUrl: string;
  accountKey: AccountKey;
  /** The account URL when known (cert-manager's `status.acme.uri`); set by registerAccount otherwise. */
  accountUrl?: string;
  retry?: Partial<RetryPolicy>;
  /** How long waitForOrder/waitForAuthorization poll before giving up. */
  pollTimeoutMs?: number;
}

export interface NewOrderInput {
  identifiers: AcmeIdentifier[];
  notBefore?: Date;
  /** Only when the Issuer's `enableDurationFeature` asks for the request's duration. */
  notAfter?: Date;
  /** Sent only if the directory's `meta.profiles` lists it; refused here otherwise, as cert-manager does. */
  profile?: string;
  /** ARI: the CertID of the certificate this order replaces. */
  replaces?: string;
}

/** A profile the server does not offer: cert-manager fails the Order before sending anything. */
export class AcmeUnsupportedProfileError extends Error {
  override readonly name = 'AcmeUnsupportedProfileError';
}

/** A poll that did not reach a final state in time. */
export class AcmePollTimeoutError extends Error {
  override readonly name = 'AcmePollTimeoutError';
}

const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, maxWaitMs: 10_000, badNonceAttempts: 10 };
const JOSE_JSON = 'application/jose+json';
const PEM_CHAIN = 'application/pem-certificate-chain';
/** The first pause between polls, doubling up to POLL_MAX_MS. */
export const POLL_MIN_MS = 100;
const POLL_MAX_MS = 5_000;

export class AcmeClient {
  readonly directoryUrl: string;
  readonly accountKey: AccountKey;
  #accountUrl: string | undefined;
  readonly #transport: AcmeTransport;
  readonly #nonces = new NoncePool();
  readonly #retry: RetryPolicy;
  readonly #pollTimeoutMs: number;
  #directory: Promise<AcmeDirectory> | undefined;

  constructor(options: AcmeClientOptions) {
    this.directoryUrl = options.directoryUrl;
    this.accountKey = options.accountKey;
    this.#accountUrl = options.accountUrl;
    this.#transport = new AcmeTransport(options);
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#pollTimeoutMs = options.pollTimeoutMs ?? 120_000;
  }

  get accountUrl(): string | undefined {
    return this.#accountUrl;
  }

  /** Releases the connections. */
  async close(): Promise<void> {
    await this.#transport.close();
  }

  /** The directory, fetched once per client (a failed fetch is tried again on the next call). */
  async directory(): Promise<AcmeDirectory> {
    this.#directory ??= this.#fetchDirectory().catch((error: unknown) => {
      this.#directory = undefined;
      throw error;
    });
    return this.#directory;
  }

  async #fetchDirectory(): Promise<AcmeDirectory> {
    const response = await this.#withRetries('discover', () =>
      this.#transport.send('discover', 'GET', this.directoryUrl, { accept: 'application/json' }),
    );
    const directory = parseJson<AcmeDirectory>(response);
    for (const field of ['newNonce', 'newAccount', 'newOrder'] as const) {
      if (typeof directory[field] !== 'string') {
        throw new AcmeProtocolError(`the ACME directory at ${this.directoryUrl} has no ${field} URL`);
      }
    }
    return directory;
  }

  // -------------------------------------------------------------------------------------------------------
  // Accounts (RFC 8555 §7.3)

  /**
   * newAccount. A key that already has an account gets it back (200 instead of 201; `created` false), so this
   * is also how a lost account URL is found again. `onlyReturnExisting` never creates one and fails with
   * accountDoesNotExist instead.
   */
  async registerAccount(
    input: {
      contact?: string[];
      termsOfServiceAgreed?: boolean;
      onlyReturnExisting?: boolean;
      externalAccountBinding?: ExternalAccountBindingInput;
    } = {},
  ): Promise<{ account: AcmeAccount; created: boolean }> {
    const { newAccount } = await this.directory();
    const payload: Record<string, unknown> = {};
    if (input.contact) payload.contact = input.contact;
    if (input.termsOfServiceAgreed !== undefined) payload.termsOfServiceAgreed = input.termsOfServiceAgreed;
    if (input.onlyReturnExisting) payload.onlyReturnExisting = true;
    if (input.externalAccountBinding) {
      payload.externalAccountBinding = await externalAccountBinding({
        ...input.externalAccountBinding,
        url: newAccount,
        accountJwk: this.accountKey.publicJwk,
      });
    }
    const action = input.onlyReturnExisting ? 'get_registration' : 'register_account';
    const response = await this.#post(action, newAccount, payload, { signWithJwk: true });
    const url = requireLocation(response);
    this.#accountUrl = url;
    return {
      account: { ...parseJson<Omit<AcmeAccount, 'url'>>(response), url },
      created: response.status === 201,
    };
  }

  /** The account as the server has it (POST-as-GET of the account URL). */
  async getAccount(): Promise<AcmeAccount> {
    const url = this.#requireAccountUrl();
    const response = await this.#post('get_registration', url, undefined);
    return { ...parseJson<Omit<AcmeAccount, 'url'>>(response), url };
  }

  /** Replaces the account's contacts (an empty list removes them all). */
  async updateAccount(input: { contact: string[] }): Promise<AcmeAccount> {
    const url = this.#requireAccountUrl();
    const response = await this.#post('update_registration', url, { contact: input.contact });
    return { ...parseJson<Omit<AcmeAccount, 'url'>>(response), url };
  }

  // -------------------------------------------------------------------------------------------------------
  // Orders, authorizations, challenges (§7.4, §7.5)

  async newOrder(input: NewOrderInput): Promise<AcmeOrder> {
    const directory = await this.directory();
    const payload: Record<string, unknown> = { identifiers: input.identifiers };
    if (input.notBefore) payload.notBefore = formatTime(input.notBefore);
    if (input.notAfter) payload.notAfter = formatTime(input.notAfter);
    if (input.profile) {
      const offered = Object.keys(directory.meta?.profiles ?? {});
      if (!offered.includes(input.profile)) {
        throw new AcmeUnsupportedProfileError(
          `the ACME server does not support profile "${input.profile}"` +
            (offered.length ? ` (it offers ${offered.join(', ')})` : ' (it offers no profiles)'),
        );
      }
      payload.profile = input.profile;
    }
    if (input.replaces) payload.replaces = input.replaces;
    const response = await this.#post('authorize_order', directory.newOrder, payload);
    const url = requireLocation(response);
    return { ...parseJson<Omit<AcmeOrder, 'url'>>(response), url };
  }

  async getOrder(url: string, action: AcmeAction = 'get_order'): Promise<AcmeOrder> {
    const response = await this.#post(action, url, undefined);
    return { ...parseJson<Omit<AcmeOrder, 'url'>>(response), url };
  }

  async getAuthorization(url: string, action: AcmeAction = 'get_authorization'): Promise<AcmeAuthorization> {
    const response = await this.#post(action, url, undefined);
    return { ...parseJson<Omit<AcmeAuthorization, 'url'>>(response), url };
  }

  /** POST-as-GET of a challenge. cert-manager reads challenges through their authorization instead. */
  async getChallenge(url: string): Promise<AcmeChallenge> {
    return parseJson<AcmeChallenge>(await this.#post('get_challenge', url, undefined));
  }

  /** Tells the server the challenge is ready to be validated (POST `{}`). */
  async acceptChallenge(url: string): Promise<AcmeChallenge> {
    return parseJson<AcmeChallenge>(await this.#post('accept_challenge', url, {}));
  }

  /** Polls the order until it leaves `pending`/`processing`, as long as Retry-After says (bounded). */
  async waitForOrder(url: string): Promise<AcmeOrder> {
    return this.#poll(url, 'wait_order', (body) => body.status !== 'pending' && body.status !== 'processing');
  }

  /**
   * Polls the authorization until it leaves `pending`. `firstPollAfterMs` delays the first poll: right after a
   * challenge is accepted the server has only started validating, and a poll at once would nearly always
   * find it pending and cost a signed request for nothing (the next one would come 100 ms later anyway).
   */
  async waitForAuthorization(
    url: string,
    options: { firstPollAfterMs?: number } = {},
  ): Promise<AcmeAuthorization> {
    if (options.firstPollAfterMs) await sleep(options.firstPollAfterMs);
    return this.#poll(url, 'wait_authorization', (body) => body.status !== 'pending');
  }

  /** Sends the CSR (DER) to the order's finalize URL; the order comes back `processing` or `valid`. */
  async finalizeOrder(finalizeUrl: string, csrDer: Uint8Array, orderUrl?: string): Promise<AcmeOrder> {
    const response = await this.#post('create_order_cert', finalizeUrl, {
      csr: Buffer.from(csrDer).toString('base64url'),
    });
    const url = orderUrl ?? firstHeader(response.headers.location) ?? '';
    return { ...parseJson<Omit<AcmeOrder, 'url'>>(response), url };
  }

  // -------------------------------------------------------------------------------------------------------
  // Certificates (§7.4.2)

  /** One certificate chain (PEM, leaf first) and the Link rel="alternate" URLs of the others. */
  async downloadCertificate(url: string, action: AcmeAction = 'fetch_cert'): Promise<AcmeCertificateChain> {
    const response = await this.#post(action, url, undefined, { accept: PEM_CHAIN });
    return {
      pem: response.body.toString('utf8'),
      alternates: linkTargets(response.headers.link, 'alternate', url),
    };
  }

  /**
   * The chain to store, chosen as cert-manager does: the default chain unless `preferredChain` names the
   * issuer of another chain's top-most certificate; alternates are fetched, in the server's order, only when
   * the default one does not match. No match keeps the default (it is a preference, not a requirement).
   */
  async certificateChain(url: string, preferredChain?: string): Promise<string> {
    const chain = await this.downloadCertificate(url);
    if (!preferredChain || chainMatchesPreferred(chain.pem, preferredChain)) return chain.pem;
    for (const alternate of chain.alternates) {
      const candidate = await this.downloadCertificate(alternate);
      if (chainMatchesPreferred(candidate.pem, preferredChain)) return candidate.pem;
    }
    return chain.pem;
  }

  // -------------------------------------------------------------------------------------------------------
  // Requests

  #requireAccountUrl(): string {
    if (!this.#accountUrl) throw new Error('the ACME account is not registered yet (no account URL)');
    return this.#accountUrl;
  }

  async #poll<T extends { status: string }>(
    url: string,
    action: AcmeAction,
    done: (body: T) => boolean,
  ): Promise<T & { url: string }> {
    const deadline = Date.now() + this.#pollTimeoutMs;
    let delay = POLL_MIN_MS;
    for (;;) {
      const response = await this.#post(action, url, undefined);
      const body = { ...parseJson<T>(response), url };
      if (done(body)) return body;
      const retryAt = parseRetryAfter(response.headers['retry-after']);
      const wait = clamp(retryAt ? retryAt.getTime() - Date.now() : delay, POLL_MIN_MS, POLL_MAX_MS);
      if (Date.now() + wait > deadline) {
        throw new AcmePollTimeoutError(`${url} is still ${body.status} after ${this.#pollTimeoutMs / 1000}s`);
      }
      await sleep(wait);
      delay = Math.min(delay * 2, POLL_MAX_MS);
    }
  }

  /**
   * A JWS-signed POST. badNonce is answered by signing again with the nonce that came with the refusal;
   * 429/5xx go through the retry policy. The nonce pool is refilled from every answer, errors included.
   */
  async #post(
    action: AcmeAction,
    url: string,
    payload: unknown,
    options: { signWithJwk?: boolean; accept?: string } = {},
  ): Promise<AcmeHttpResponse> {
    const directory = await this.directory();
    const kid = options.signWithJwk ? undefined : this.#requireAccountUrl();
    let badNonces = 0;
    for (;;) {
      try {
        return await this.#withRetries(action, async () => {
          const nonce = this.#nonces.take() ?? (await this.#newNonce(action, directory.newNonce));
          const jws = await signRequest({ key: this.accountKey, url, nonce, kid, payload });
          const response = await this.#transport.send(action, 'POST', url, {
            body: JSON.stringify(jws),
            contentType: JOSE_JSON,
            accept: options.accept,
          });
          this.#nonces.add(firstHeader(response.headers['replay-nonce']));
          return response;
        });
      } catch (error) {
        if (
          error instanceof AcmeProblemError &&
          error.is(AcmeErrorType.badNonce) &&
          ++badNonces < this.#retry.badNonceAttempts
        ) {
          continue;
        }
        throw error;
      }
    }
  }

  async #newNonce(action: AcmeAction, newNonceUrl: string): Promise<string> {
    const response = await this.#withRetries(action, () => this.#transport.send(action, 'HEAD', newNonceUrl));
    const nonce = firstHeader(response.headers['replay-nonce']);
    if (!nonce) throw new AcmeProtocolError(`the ACME server sent no Replay-Nonce from ${newNonceUrl}`);
    return nonce;
  }

  /**
   * Sends, turns error answers into AcmeProblemError, and repeats 429 and 5xx answers while the wait they
   * ask for (Retry-After, else 1 s, 2 s, …) fits the policy. cert-manager itself returns a 429 at once
   * (its issue #5867); a short wait here spares the Order an errored state for a momentary limit.
   */
  async #withRetries(action: AcmeAction, send: () => Promise<AcmeHttpResponse>): Promise<AcmeHttpResponse> {
    for (let attempt = 1; ; attempt++) {
      const response = await send();
      if (response.status < 400) return response;
      const error = problemOf(response);
      const retryable = response.status === 429 || response.status >= 500;
      if (!retryable || attempt >= this.#retry.maxAttempts) throw error;
      const wait = error.retryAfter ? error.retryAfter.getTime() - Date.now() : 1000 * 2 ** (attempt - 1);
      if (wait > this.#retry.maxWaitMs) throw error;
      await sleep(Math.max(0, wait));
    }
  }
}

function problemOf(response: AcmeHttpResponse): AcmeProblemError {
  let problem: AcmeProblemDocument | undefined;
  try {
    const parsed: unknown = JSON.parse(response.body.toString('utf8'));
    if (parsed && typeof parsed === 'object') problem = parsed as AcmeProblemDocument;
  } catch {
    // Not a problem document (a proxy's HTML error page, say): the status alone must do.
  }
  return new AcmeProblemError({
    status: response.status,
    url: response.url,
    problem,
    retryAfter: parseRetryAfter(response.headers['retry-after']),
  });
}

function parseJson<T>(response: AcmeHttpResponse): T {
  try {
    return JSON.parse(response.body.toString('utf8')) as T;
  } catch {
    throw new AcmeProtocolError(`the ACME server's answer from ${response.url} is not JSON`);
  }
}

function requireLocation(response: AcmeHttpResponse): string {
  const location = firstHeader(response.headers.location);
  if (!location) throw new AcmeProtocolError(`the ACME server sent no Location from ${response.url}`);
  return new URL(location, response.url).toString();
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}
