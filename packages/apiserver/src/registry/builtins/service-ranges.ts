/**
 * The ranges Services take values from, as kube-apiserver's allocators hand them out: cluster IPs from the
 * service CIDR (--service-cluster-ip-range) and node ports from --service-node-port-range.
 *
 * Each allocated value is one storage key (`/registry/ranges/serviceips/10.0.0.7`,
 * `/registry/ranges/servicenodeports/30080`), created with storage's atomic create, so two writers (two
 * requests, or two servers on one etcd) can never take the same value: the one whose create fails sees the
 * value as taken. This is the shape of kube's own IPAddress objects (one object per allocated IP) rather than
 * its older single bitmap, which needs a read-modify-write of the whole range per allocation. Values are
 * released by the ServiceRangesRepair controller when the owning Service lets go of them (deleted, or changed
 * to a type that holds none), and entries whose Service never got stored are reclaimed by its sweep.
 */

import ipaddr from 'ipaddr.js';
import { type FieldError, goStringSlice, newInvalid, type StoredObject } from '@certkit/apimachinery';
import { KeyExistsError, type Storage } from '../../storage/types.ts';

/** kube-apiserver's defaults (cmd/kube-apiserver/app/options: DefaultServiceIPCIDR, DefaultServiceNodePortRange). */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';

export const SERVICE_IPS_PREFIX = '/registry/ranges/serviceips/';
export const NODE_PORTS_PREFIX = '/registry/ranges/servicenodeports/';

/** What a ledger key holds: who took the value, and when (the repair sweep's grace period). */
export interface RangeEntry {
  namespace: string;
  uid: string;
  allocatedAt: string;
}

/** The configured ranges, parsed once per server. */
export interface ServiceRanges {
  storage: Storage;
  cidr: ServiceCidr;
  nodePorts: PortRange;
}

export interface ServiceCidr {
  text: string;
  /** First and last usable addresses as numbers (network and broadcast addresses excluded). */
  first: number;
  last: number;
}

export interface PortRange {
  text: string;
  base: number;
  size: number;
}

/** The server's ranges from its options (kube-apiserver's defaults where not given). */
export function serviceRanges(
  storage: Storage,
  clusterIpRange = DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  nodePortRange = DEFAULT_SERVICE_NODE_PORT_RANGE,
): ServiceRanges {
  return { storage, cidr: parseServiceCidr(clusterIpRange), nodePorts: parsePortRange(nodePortRange) };
}

export function parseServiceCidr(text: string): ServiceCidr {
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text);
  } catch {
    throw new Error(`invalid service cluster IP range ${JSON.stringify(text)}: not a CIDR`);
  }
  const [address, bits] = parsed;
  if (address.kind() !== 'ipv4') throw new Error(`service cluster IP range ${text}: only IPv4 is supported`);
  if (bits > 30) throw new Error(`service cluster IP range ${text}: must hold at least two addresses`);
  const network = toNumber(address as ipaddr.IPv4) & (bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0);
  const size = 2 ** (32 - bits);
  return { text, first: (network >>> 0) + 1, last: (network >>> 0) + size - 2 };
}

export function parsePortRange(text: string): PortRange {
  const m = /^(\d+)-(\d+)$/.exec(text);
  const base = Number(m?.[1]);
  const end = Number(m?.[2]);
  if (!m || base < 1 || end > 65535 || end < base) throw new Error(`invalid node port range ${text}`);
  return { text, base, size: end - base + 1 };
}

function toNumber(ip: ipaddr.IPv4): number {
  return ip.octets.reduce((n, o) => n * 256 + o, 0);
}

function toText(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

/** The address as a number when it is an IPv4 address in kube's strict form; undefined otherwise. */
export function ipv4Number(text: string): number | undefined {
  if (!ipaddr.IPv4.isValidFourPartDecimal(text)) return undefined;
  // Leading zeros are ambiguous (octal or decimal): kube refuses them.
  if (text.split('.').some((o) => o.length > 1 && o.startsWith('0'))) return undefined;
  return toNumber(ipaddr.IPv4.parse(text));
}

/**
 * The first address a dynamic allocation tries: kube (KEP-3070) leaves the bottom of a range to addresses
 * chosen by hand, taking random ones from above it first: min(max(16, size/16), 256) addresses for IPs,
 * min(max(16, size/32), 128) ports for node ports; a range of fewer than 16 has no static band at all.
 */
function staticBand(size: number, divisor: number, max: number): number {
  if (size < 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / divisor)), max);
}

/** Values in random order: the dynamic band first, then the static one, as kube's allocators try them. */
function* candidates(base: number, size: number, band: number): Generator<number> {
  const upper = size - band;
  const start = Math.floor(Math.random() * Math.max(upper, 1));
  for (let i = 0; i < upper; i++) yield base + band + ((start + i) % upper);
  const lowStart = Math.floor(Math.random() * band);
  for (let i = 0; i < Math.min(band, size); i++) yield base + ((lowStart + i) % band);
}

const entry = (owner: StoredObject): string =>
  JSON.stringify({
    namespace: owner.metadata.namespace ?? '',
    uid: owner.metadata.uid ?? '',
    allocatedAt: new Date().toISOString(),
  } satisfies RangeEntry);

/** Takes the key if free; false when another holder has it. */
async function take(storage: Storage, key: string, owner: StoredObject): Promise<boolean> {
  try {
    await storage.create(key, entry(owner));
    return true;
  } catch (err) {
    if (err instanceof KeyExistsError) return false;
    throw err;
  }
}

/** Everything one Service write took, to give back if the write then fails. */
export class Reservation {
  private readonly keys: string[] = [];
  private readonly storage: Storage;
  constructor(storage: Storage) {
    this.storage = storage;
  }

  add(key: string): void {
    this.keys.push(key);
  }

  async release(): Promise<void> {
    for (const key of this.keys.splice(0)) {
      await this.storage.delete(key).catch(() => {});
    }
  }
}

function invalid(obj: StoredObject, errors: FieldError[]): Error {
  return newInvalid('', 'Service', obj.metadata.name ?? obj.metadata.generateName ?? '', errors);
}

/**
 * Allocates a cluster IP for the Service: the one it asks for (which must be in range and free), or a free
 * one chosen at random. dryRun checks without taking anything, as kube's dry-run allocator does.
 */
export async function allocateClusterIp(
  ranges: ServiceRanges,
  obj: StoredObject,
  requested: string | undefined,
  reservation: Reservation,
  dryRun: boolean,
): Promise<string> {
  const { cidr, storage } = ranges;
  if (requested) {
    const n = ipv4Number(requested);
    const fail = (why: string) =>
      invalid(obj, [
        {
          type: 'FieldValueInvalid',
          field: 'spec.clusterIPs',
          value: goStringSlice([requested]),
          detail: `failed to allocate IP ${requested}: ${why}`,
        },
      ]);
    if (n === undefined || n < cidr.first || n > cidr.last) {
      throw fail(
        `the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${cidr.text}`,
      );
    }
    const key = `${SERVICE_IPS_PREFIX}${requested}`;
    if (dryRun) {
      if (await storage.get(key)) throw fail('provided IP is already allocated');
      return requested;
    }
    if (!(await take(storage, key, obj))) throw fail('provided IP is already allocated');
    reservation.add(key);
    return requested;
  }
  const size = cidr.last - cidr.first + 1;
  for (const n of candidates(cidr.first, size, staticBand(size, 16, 256))) {
    const ip = toText(n);
    const key = `${SERVICE_IPS_PREFIX}${ip}`;
    if (dryRun ? !(await storage.get(key)) : await take(storage, key, obj)) {
      if (!dryRun) reservation.add(key);
      return ip;
    }
  }
  throw invalid(obj, [
    {
      type: 'FieldValueInvalid',
      field: 'spec.clusterIPs',
      value: goStringSlice([]),
      detail: 'failed to allocate a serviceIP: range is full',
    },
  ]);
}

/**
 * Allocates a node port for `field` (a port's nodePort, or spec.healthCheckNodePort): the one asked for (in
 * range and free) or a random free one.
 */
export async function allocateNodePort(
  ranges: ServiceRanges,
  obj: StoredObject,
  field: string,
  requested: number | undefined,
  reservation: Reservation,
  dryRun: boolean,
): Promise<number> {
  const { nodePorts, storage } = ranges;
  if (requested) {
    const fail = (why: string) =>
      invalid(obj, [{ type: 'FieldValueInvalid', field, value: requested, detail: why }]);
    if (requested < nodePorts.base || requested >= nodePorts.base + nodePorts.size) {
      throw fail(`provided port is not in the valid range. The range of valid ports is ${nodePorts.text}`);
    }
    const key = `${NODE_PORTS_PREFIX}${requested}`;
    if (dryRun) {
      if (await storage.get(key)) throw fail('provided port is already allocated');
      return requested;
    }
    if (!(await take(storage, key, obj))) throw fail('provided port is already allocated');
    reservation.add(key);
    return requested;
  }
  for (const port of candidates(nodePorts.base, nodePorts.size, staticBand(nodePorts.size, 32, 128))) {
    const key = `${NODE_PORTS_PREFIX}${port}`;
    if (dryRun ? !(await storage.get(key)) : await take(storage, key, obj)) {
      if (!dryRun) reservation.add(key);
      return port;
    }
  }
  throw invalid(obj, [
    { type: 'FieldValueInvalid', field, value: 0, detail: 'failed to allocate a nodePort: range is full' },
  ]);
}
