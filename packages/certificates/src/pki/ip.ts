/**
 * IP addresses as Go reads and prints them: netip.ParseAddr's syntax (no zones, no leading zeros in IPv4
 * octets) and net.IP.String's output (dotted IPv4, RFC 5952 IPv6, IPv4-mapped IPv6 printed as IPv4).
 */

function parseIPv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    octets.push(octet);
  }
  return octets;
}

/** Colon-separated hex groups; an embedded IPv4 is allowed only as the address's last part. */
function parseGroups(text: string, endsAddress: boolean): number[] | undefined {
  if (text === '') return [];
  const groups: number[] = [];
  const parts = text.split(':');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (endsAddress && i === parts.length - 1 && part.includes('.')) {
      const v4 = parseIPv4(part);
      if (!v4) return undefined;
      groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined;
      groups.push(Number.parseInt(part, 16));
    }
  }
  return groups;
}

function parseIPv6(text: string): Buffer | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0], halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1], true) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}

/** 4 bytes for IPv4, 16 for IPv6 (IPv4-mapped addresses stay 16 bytes, as netip keeps them). */
export function parseIpAddress(text: string): Buffer {
  const v4 = text.includes(':') ? undefined : parseIPv4(text);
  const bytes = v4 ? Buffer.from(v4) : parseIPv6(text);
  if (!bytes) throw new Error(`failed to parse IP address ${JSON.stringify(text)}`);
  return bytes;
}

/** net.IP.To4: the 4-byte form of an IPv4 or IPv4-mapped IPv6 address, else undefined. */
export function toIPv4(bytes: Buffer): Buffer | undefined {
  if (bytes.length === 4) return bytes;
  if (
    bytes.length === 16 &&
    bytes.subarray(0, 10).every((b) => b === 0) &&
    bytes[10] === 0xff &&
    bytes[11] === 0xff
  ) {
    return bytes.subarray(12);
  }
  return undefined;
}

export function formatIpAddress(bytes: Buffer): string {
  const v4 = toIPv4(bytes);
  if (v4) return [...v4].join('.');
  if (bytes.length !== 16) return `?${bytes.toString('hex')}`;
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2));
  // RFC 5952: the longest run of two or more zero groups (the first on a tie) becomes "::".
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
