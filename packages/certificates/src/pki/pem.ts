/** PEM armour (RFC 7468), written byte for byte as Go's encoding/pem writes it. */

export interface PemBlock {
  type: string;
  der: Buffer;
}

const BLOCK = /-----BEGIN ([^-\r\n]*)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** Every PEM block in `text`, in order; text between blocks (comments, blank lines) is ignored. */
export function decodePemBlocks(text: string | Buffer): PemBlock[] {
  const source = typeof text === 'string' ? text : text.toString('latin1');
  const blocks: PemBlock[] = [];
  for (const match of source.matchAll(BLOCK)) {
    const body = match[2];
    // Headers (RFC 1421 "Proc-Type: …") only appear in encrypted legacy keys, which we do not accept.
    if (body.includes(':')) throw new Error(`PEM block ${match[1]} has headers, which are not supported`);
    const base64 = body.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw new Error(`PEM block ${match[1]} is not valid base64`);
    blocks.push({ type: match[1], der: Buffer.from(base64, 'base64') });
  }
  return blocks;
}

/** The first PEM block of `type`, or an error naming what was expected. */
export function decodePemBlock(text: string | Buffer, types: readonly string[]): PemBlock {
  const block = decodePemBlocks(text)[0];
  if (!block) throw new Error(`no PEM data found (expected ${types.join(' or ')})`);
  if (!types.includes(block.type)) throw new Error(`unexpected PEM block type ${JSON.stringify(block.type)}`);
  return block;
}

/** 64-character lines and a trailing newline, like pem.EncodeToMemory. */
export function encodePem(type: string, der: Uint8Array): string {
  const base64 = Buffer.from(der).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 64) lines.push(base64.slice(i, i + 64));
  return `-----BEGIN ${type}-----\n${lines.join('\n')}${lines.length ? '\n' : ''}-----END ${type}-----\n`;
}
