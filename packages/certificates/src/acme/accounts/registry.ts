import { createHash, type KeyObject } from 'node:crypto';
import { AcmeClient } from '../client/client.ts';
import { loadAccountKey } from '../client/account-key.ts';
import type { AcmeClientMetrics } from '../client/metrics.ts';

/**
 * The ACME clients of the issuers whose accounts are set up, by issuer UID (cert-manager's
 * `accounts.Registry`): the issuer controllers put a client here, and the Order and Challenge controllers
 * take it from here. An issuer set up again with the same server, key and TLS settings keeps its client, so a
 * reference another controller holds stays usable; a changed one gets a new client and the old one is closed
 * (requests already sent on it finish first).
 */

export interface AcmeAccountClientOptions {
  server: string;
  privateKey: KeyObject;
  /** PEM CAs for the server's TLS (the issuer's decoded `caBundle`). */
  caBundle?: Buffer;
  skipTLSVerify?: boolean;
}

interface Entry {
  client: AcmeClient;
  fingerprint: string;
}

export class AcmeAccountRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #metrics: AcmeClientMetrics | undefined;
  readonly #userAgent: string | undefined;

  constructor(options: { metrics?: AcmeClientMetrics; userAgent?: string } = {}) {
    this.#metrics = options.metrics;
    this.#userAgent = options.userAgent;
  }

  /**
   * The issuer's client for these settings: its current one when the settings are the same (and, if
   * `accountUrl` is given, it knows that account), else a new one that replaces it.
   */
  async clientFor(uid: string, options: AcmeAccountClientOptions, accountUrl?: string): Promise<AcmeClient> {
    const fingerprint = fingerprintOf(options);
    const current = this.#entries.get(uid);
    if (current?.fingerprint === fingerprint && (!accountUrl || current.client.accountUrl === accountUrl)) {
      return current.client;
    }
    const client = new AcmeClient({
      directoryUrl: options.server,
      accountKey: await loadAccountKey(options.privateKey),
      accountUrl,
      caBundle: options.caBundle,
      skipTLSVerify: options.skipTLSVerify,
      metrics: this.#metrics,
      userAgent: this.#userAgent,
    });
    // Another setup of the same issuer may have finished meanwhile; the last one wins either way.
    const replaced = this.#entries.get(uid);
    this.#entries.set(uid, { client, fingerprint });
    if (replaced) void replaced.client.close();
    return client;
  }

  /** Forgets (and closes) the issuer's client: its account is not usable (or the issuer is gone). */
  remove(uid: string): void {
    const entry = this.#entries.get(uid);
    this.#entries.delete(uid);
    if (entry) void entry.client.close();
  }

  /** The issuer's client, or undefined while its account is not set up. */
  get(uid: string): AcmeClient | undefined {
    return this.#entries.get(uid)?.client;
  }

  async close(): Promise<void> {
    const clients = [...this.#entries.values()].map((e) => e.client);
    this.#entries.clear();
    await Promise.all(clients.map((c) => c.close()));
  }
}

function fingerprintOf(options: AcmeAccountClientOptions): string {
  return createHash('sha256')
    .update(options.server)
    .update('\0')
    .update(options.privateKey.export({ type: 'pkcs8', format: 'der' }))
    .update('\0')
    .update(options.caBundle ?? '')
    .update(options.skipTLSVerify ? '\0skip' : '\0verify')
    .digest('base64');
}
