import { X509Certificate } from 'node:crypto';
import { decodePemBlocks, encodePem } from '../pki/pem.ts';

/**
 * cert-manager's CAInjectorMerging (GA, on): a new CA joins the bundle a target already trusts instead of
 * replacing it, so that while a CA rotates, the webhook's old serving certificate (signed by the old CA) and
 * its new one both verify. Certificates already in the bundle come first, then the new ones; a certificate
 * seen before, or one past its notAfter, is dropped; the result is PEM as Go's encoding/pem writes it. When
 * either side is not a set of certificates, the new data replaces the bundle, as cainjector falls back to.
 */
export function mergeCABundle(current: Buffer | undefined, added: Buffer, now = new Date()): Buffer {
  const existing = current && current.length > 0 ? certificatesIn(current) : [];
  const incoming = certificatesIn(added);
  if (existing === undefined || incoming === undefined) return added;
  const seen = new Set<string>();
  let merged = '';
  for (const der of [...existing, ...incoming]) {
    const key = der.toString('base64');
    if (seen.has(key) || expired(der, now)) continue;
    seen.add(key);
    merged += encodePem('CERTIFICATE', der);
  }
  return Buffer.from(merged);
}

/** The DER of every certificate in PEM `data`, or undefined when it holds something else or none at all. */
function certificatesIn(data: Buffer): Buffer[] | undefined {
  let blocks;
  try {
    blocks = decodePemBlocks(data);
  } catch {
    return undefined;
  }
  if (blocks.length === 0 || blocks.some((b) => b.type !== 'CERTIFICATE')) return undefined;
  for (const block of blocks) {
    try {
      new X509Certificate(block.der);
    } catch {
      return undefined;
    }
  }
  return blocks.map((b) => b.der);
}

function expired(der: Buffer, now: Date): boolean {
  return new X509Certificate(der).validToDate.getTime() < now.getTime();
}
