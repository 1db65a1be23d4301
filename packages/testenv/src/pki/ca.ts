/** Helpers shared by the pki tests: an openssl CLI cross-check and a small CA factory. */

import { spawnSync } from 'node:child_process';
import type { KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCertificateRequest, type CertificateRequestSpec } from '@certkit/certificates/pki/csr';
import { generatePrivateKey, type PrivateKeySpec } from '@certkit/certificates/pki/keys';
import { signCertificate, type CertificateIssuer } from '@certkit/certificates/pki/sign';

let opensslChecked: string | undefined | null = null;

/** Why openssl cannot be used, or undefined when it can. */
export function opensslUnavailable(): string | undefined {
  if (opensslChecked === null) {
    const result = spawnSync('openssl', ['version'], { encoding: 'utf8' });
    opensslChecked = result.error
      ? `openssl is not on PATH (${result.error.message})`
      : result.status === 0
        ? undefined
        : `openssl version exited with ${result.status}`;
  }
  return opensslChecked;
}

/** Runs openssl with files written to a fresh temporary directory; `files` maps names to contents. */
export function openssl(args: (dir: string) => string[], files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'certkit-pki-'));
  try {
    for (const [name, contents] of Object.entries(files)) writeFileSync(join(dir, name), contents);
    const result = spawnSync('openssl', args(dir), { encoding: 'utf8' });
    return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `openssl verify -CAfile root [-untrusted intermediates] leaf`. */
export function opensslVerify(rootPem: string, leafPem: string, intermediatesPem?: string) {
  const files: Record<string, string> = { 'root.pem': rootPem, 'leaf.pem': leafPem };
  if (intermediatesPem) files['untrusted.pem'] = intermediatesPem;
  return openssl(
    (dir) => [
      'verify',
      '-CAfile',
      join(dir, 'root.pem'),
      ...(intermediatesPem ? ['-untrusted', join(dir, 'untrusted.pem')] : []),
      join(dir, 'leaf.pem'),
    ],
    files,
  );
}

export const HOUR = 60 * 60 * 1000;
export const DAY = 24 * HOUR;

export interface Issued {
  key: KeyObject;
  csrPem: string;
  certPem: string;
  caPem: string;
}

/** Key + CSR + certificate in one go. */
export async function issue(options: {
  spec: CertificateRequestSpec;
  keySpec?: PrivateKeySpec;
  key?: KeyObject;
  issuer?: CertificateIssuer | 'self';
  duration?: number;
  now?: Date;
}): Promise<Issued> {
  const key = options.key ?? (await generatePrivateKey(options.keySpec ?? { algorithm: 'ECDSA' }));
  const csrPem = await buildCertificateRequest(options.spec, key);
  const issuer = !options.issuer || options.issuer === 'self' ? { selfSignedKey: key } : options.issuer;
  const { certPem, caPem } = await signCertificate({
    csrPem,
    duration: options.duration ?? 90 * DAY,
    isCA: options.spec.isCA ?? false,
    usages: options.spec.usages,
    issuer,
    now: options.now,
  });
  return { key, csrPem, certPem, caPem };
}

/** A self-signed root CA. */
export async function rootCa(
  keySpec: PrivateKeySpec = { algorithm: 'ECDSA' },
  duration = 365 * DAY,
  now?: Date,
) {
  return issue({ spec: { commonName: 'certkit test root', isCA: true }, keySpec, duration, now });
}
