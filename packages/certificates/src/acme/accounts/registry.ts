import type { KeyObject } from 'node:crypto';
import { AcmeClient } from '../client/client.ts';
import { loadAccountKey } from '../client/account-key.ts';
import type { AcmeClientMetrics } from '../client/metrics.ts';

/**
 * The ACME clients of the issuers whose accounts are registered, by issuer UID (cert-manager's
 * `accounts.Registry`): the issuer controllers put a client here once its account is verified, and the
 * Order and Challenge controllers take it from here. A client is replaced whenever its issuer is set up
 * again, so a changed server, key or TLS setting never keeps an old connection.
 */

export interface AcmeAccountClientOptions {
  server: string;
  privateKey: KeyObject;
  /** PEM CAs for the server's TLS (the issuer's decoded `caBundle`). */
  caBundle?: Buffer;
  skipTLSVerify?: boolean;
  accountUrl?: string;
}

export class AcmeAccountRegistry {
  readonly #clients = new Map<string, AcmeClient>();
  readonly #metrics: AcmeClientMetrics | undefined;
  readonly #userAgent: string | undefined;

  constructor(options: { metrics?: AcmeClientMetrics; userAgent?: string } = {}) {
    this.#metrics = options.metrics;
    this.#userAgent = options.userAgent;
  }

  /** A new client for these settings; not registered until `add`. */
  async newClient(options: AcmeAccountClientOptions): Promise<AcmeClient> {
    return new AcmeClient({
      directoryUrl: options.server,
      accountKey: await loadAccountKey(options.privateKey),
      accountUrl: options.accountUrl,
      caBundle: options.caBundle,
      skipTLSVerify: options.skipTLSVerify,
      metrics: this.#metrics,
      userAgent: this.#userAgent,
    });
  }

  /** Makes `client` the issuer's client, closing the one it replaces. */
  add(uid: string, client: AcmeClient): void {
    const previous = this.#clients.get(uid);
    this.#clients.set(uid, client);
    if (previous && previous !== client) void previous.close();
  }

  /** Forgets (and closes) the issuer's client. */
  remove(uid: string): void {
    const previous = this.#clients.get(uid);
    this.#clients.delete(uid);
    if (previous) void previous.close();
  }

  /** The issuer's client, or undefined while its account is not verified. */
  get(uid: string): AcmeClient | undefined {
    return this.#clients.get(uid);
  }

  async close(): Promise<void> {
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(clients.map((c) => c.close()));
  }
}
