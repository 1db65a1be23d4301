/**
 * The RFC2136 DNS-01 provider: dynamic updates (RFC 2136) signed with TSIG (RFC 8945), as cert-manager sends
 * them (pkg/issuer/acme/dns/rfc2136/rfc2136.go): one UPDATE per change, zone section = the resolved zone, no
 * prerequisites; present adds the TXT value with TTL 60 and class IN, clean-up deletes that one record
 * (class NONE, TTL 0) so other values at the name survive.
 *
 * Transport: UDP unless the solver says `protocol: TCP`; an answer with the TC bit is asked again over TCP
 * (cert-manager would fail there; an UPDATE answer is tiny, so this only matters behind a middlebox that
 * truncates). A signed request must get a signed answer that verifies, else the change is not trusted.
 */

import { randomInt } from 'node:crypto';
import type { SecretKeySelector } from '../../api/types.ts';
import { NameserverError, parseRFC2136Nameserver, type Nameserver } from './nameserver.ts';
import { DNS01ConfigError, type DNS01ChangeRequest, type DNS01Provider, readSecretKey } from './provider.ts';
import { DEFAULT_DNS_TIMEOUT_MS, type Protocol, exchange } from './transport.ts';
import {
  decodeTsigSecret,
  signMessage,
  tsigAlgorithm,
  TsigError,
  type TsigKey,
  verifyResponse,
} from './tsig.ts';
import {
  type DecodedMessage,
  decodeMessage,
  encodeMessage,
  fqdn,
  Opcode,
  RRClass,
  RRType,
  rcodeName,
  Rcode,
  txtData,
  type RecordToEncode,
} from './wire.ts';

/** The TTL cert-manager gives the TXT record. */
export const RFC2136_TXT_TTL = 60;

/** `dns01.rfc2136` (cert-manager's ACMEIssuerDNS01ProviderRFC2136). */
export interface RFC2136Config {
  nameserver: string;
  tsigKeyName?: string;
  tsigAlgorithm?: string;
  tsigSecretSecretRef?: SecretKeySelector;
  protocol?: 'TCP' | 'UDP';
}

export type UpdateAction = 'add' | 'delete';

export interface UpdateRequest {
  server: Nameserver;
  zone: string;
  fqdn: string;
  value: string;
  action: UpdateAction;
  /** Sign with this key; unsigned without. */
  key?: TsigKey;
  protocol?: Protocol;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class DnsUpdateError extends Error {
  /** The server's RCODE, when it answered. */
  readonly rcode: string | undefined;
  constructor(message: string, rcode?: string) {
    super(message);
    this.name = 'DnsUpdateError';
    this.rcode = rcode;
  }
}

/** The UPDATE message for one TXT change (RFC 2136 §2.5.1 add, §2.5.4 delete an RR). */
export function updateMessage(
  request: Pick<UpdateRequest, 'zone' | 'fqdn' | 'value' | 'action'>,
  id: number,
): Buffer {
  const record: RecordToEncode =
    request.action === 'add'
      ? {
          name: fqdn(request.fqdn),
          type: RRType.TXT,
          class: RRClass.IN,
          ttl: RFC2136_TXT_TTL,
          data: txtData(request.value),
        }
      : {
          name: fqdn(request.fqdn),
          type: RRType.TXT,
          class: RRClass.NONE,
          ttl: 0,
          data: txtData(request.value),
        };
  return encodeMessage({
    id,
    opcode: Opcode.UPDATE,
    questions: [{ name: fqdn(request.zone), type: RRType.SOA, class: RRClass.IN }],
    // RFC 2136 §2: the update section sits where a query's authority section does.
    authorities: [record],
  });
}

async function sendOnce(request: UpdateRequest, protocol: Protocol): Promise<{ truncated: boolean }> {
  const id = randomInt(0, 0x10000);
  let message = updateMessage(request, id);
  let requestMac: Buffer | undefined;
  if (request.key) {
    const signed = signMessage(message, request.key);
    message = signed.message;
    requestMac = signed.mac;
  }
  let raw: Buffer;
  try {
    raw = await exchange(request.server, message, protocol, {
      timeoutMs: request.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
      signal: request.signal,
    });
  } catch (err) {
    throw new DnsUpdateError(`DNS update failed: ${(err as Error).message}`);
  }
  let reply: DecodedMessage;
  try {
    reply = decodeMessage(raw);
  } catch (err) {
    throw new DnsUpdateError(`DNS update failed: ${(err as Error).message}`);
  }
  if (reply.id !== id || !reply.qr || reply.opcode !== Opcode.UPDATE) {
    throw new DnsUpdateError('DNS update failed: the server answered another message');
  }
  if (reply.tc && protocol === 'udp') return { truncated: true };
  if (request.key && requestMac) {
    const tsig = reply.additionals.at(-1)?.tsig;
    // A server that cannot verify our signature answers NOTAUTH unsigned, with the TSIG error in its TSIG
    // record (RFC 8945 §5.3.2): report the RCODE and that error rather than "not signed".
    if (reply.rcode !== Rcode.NOERROR && (!tsig || tsig.error !== 0)) {
      const detail = tsig ? ` (TSIG error ${rcodeName(tsig.error)})` : '';
      throw new DnsUpdateError(
        `DNS update failed. Server replied: ${rcodeName(reply.rcode)}${detail}`,
        rcodeName(reply.rcode),
      );
    }
    try {
      verifyResponse(raw, reply, request.key, requestMac);
    } catch (err) {
      if (err instanceof TsigError) throw new DnsUpdateError(`DNS update failed: ${err.message}`);
      throw err;
    }
  }
  if (reply.rcode !== Rcode.NOERROR) {
    throw new DnsUpdateError(
      `DNS update failed. Server replied: ${rcodeName(reply.rcode)}`,
      rcodeName(reply.rcode),
    );
  }
  return { truncated: false };
}

/** Sends one TXT change and waits for the server's NOERROR; throws DnsUpdateError otherwise. */
export async function sendUpdate(request: UpdateRequest): Promise<void> {
  const protocol = request.protocol ?? 'udp';
  const { truncated } = await sendOnce(request, protocol);
  if (truncated) await sendOnce(request, 'tcp');
}

function asConfig(config: Readonly<Record<string, unknown>>): RFC2136Config {
  if (typeof config.nameserver !== 'string') {
    throw new DNS01ConfigError('rfc2136: nameserver is required');
  }
  return config as unknown as RFC2136Config;
}

/** The server, key and protocol an `rfc2136` block describes, with its Secret read. */
export async function rfc2136Settings(
  request: Pick<DNS01ChangeRequest, 'config' | 'secrets' | 'resourceNamespace'>,
): Promise<{ server: Nameserver; key: TsigKey | undefined; protocol: Protocol }> {
  const config = asConfig(request.config);
  let server: Nameserver;
  try {
    server = parseRFC2136Nameserver(config.nameserver);
  } catch (err) {
    if (err instanceof NameserverError) throw new DNS01ConfigError(`rfc2136: ${err.message}`);
    throw err;
  }
  const protocol =
    config.protocol === undefined || config.protocol === 'UDP'
      ? 'udp'
      : config.protocol === 'TCP'
        ? 'tcp'
        : undefined;
  if (!protocol) {
    throw new DNS01ConfigError(
      `rfc2136: protocol must be "TCP" or "UDP", not ${JSON.stringify(config.protocol)}`,
    );
  }
  let algorithm;
  try {
    algorithm = tsigAlgorithm(config.tsigAlgorithm);
  } catch (err) {
    throw new DNS01ConfigError(`rfc2136: ${(err as Error).message}`);
  }
  // As cert-manager: no Secret name means no TSIG; TSIG needs both the key name and a non-empty secret.
  let secretText = '';
  if (config.tsigSecretSecretRef?.name) {
    secretText = (await readSecretKey(request, config.tsigSecretSecretRef, 'rfc2136 TSIG secret')).toString(
      'utf8',
    );
  }
  let key: TsigKey | undefined;
  if (config.tsigKeyName && secretText !== '') {
    try {
      key = { name: config.tsigKeyName, algorithm, secret: decodeTsigSecret(secretText) };
    } catch (err) {
      throw new DNS01ConfigError(`rfc2136: ${(err as Error).message}`);
    }
  }
  return { server, key, protocol };
}

export interface RFC2136ProviderOptions {
  /** Per-exchange deadline (default 10 s). */
  timeoutMs?: number;
}

export function rfc2136Provider(options: RFC2136ProviderOptions = {}): DNS01Provider {
  const change = async (request: DNS01ChangeRequest, action: UpdateAction): Promise<void> => {
    const { server, key, protocol } = await rfc2136Settings(request);
    await sendUpdate({
      server,
      zone: request.zone,
      fqdn: request.fqdn,
      value: request.value,
      action,
      key,
      protocol,
      timeoutMs: options.timeoutMs,
      signal: request.signal,
    });
  };
  return {
    name: 'rfc2136',
    present: (request) => change(request, 'add'),
    cleanUp: (request) => change(request, 'delete'),
  };
}
