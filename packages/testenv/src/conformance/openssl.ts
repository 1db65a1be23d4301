/**
 * The openssl CLI as a second opinion: chain verification, subject printing, a reference SAN extension, and
 * a CA made by a tool other than the one under test. Every helper reports when openssl cannot be used, so
 * callers can skip with a reason instead of failing.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let availability: string | undefined | null = null;

/** Why openssl cannot be used here, or undefined when it can. */
export function opensslUnavailable(): string | undefined {
  if (availability === null) {
    const result = spawnSync('openssl', ['version'], { encoding: 'utf8' });
    availability = result.error
      ? `openssl is not on PATH (${result.error.message})`
      : result.status !== 0
        ? `"openssl version" exited with ${result.status}`
        : undefined;
  }
  return availability;
}

export interface OpensslResult {
  ok: boolean;
  output: string;
  /** Files the command wrote, by the names asked for in `outputs`. */
  files: Record<string, string>;
}

/** Runs openssl in a fresh directory holding `inputs`; returns what it printed and the `outputs` it wrote. */
export function runOpenssl(
  args: (dir: string) => string[],
  inputs: Record<string, string> = {},
  outputs: string[] = [],
): OpensslResult {
  const dir = mkdtempSync(join(tmpdir(), 'certkit-conformance-'));
  try {
    for (const [name, contents] of Object.entries(inputs)) writeFileSync(join(dir, name), contents);
    const result = spawnSync('openssl', args(dir), { encoding: 'utf8' });
    const files: Record<string, string> = {};
    if (result.status === 0) for (const name of outputs) files[name] = readFileSync(join(dir, name), 'utf8');
    return {
      ok: result.status === 0,
      output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`,
      files,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `openssl verify -CAfile ca.crt [-untrusted rest-of-chain] leaf`. */
export function opensslVerify(caPem: string, chainPems: string[]): OpensslResult {
  const [leaf, ...rest] = chainPems;
  const inputs: Record<string, string> = { 'ca.pem': caPem, 'leaf.pem': leaf };
  if (rest.length) inputs['untrusted.pem'] = rest.join('');
  return runOpenssl(
    (dir) => [
      'verify',
      '-CAfile',
      join(dir, 'ca.pem'),
      ...(rest.length ? ['-untrusted', join(dir, 'untrusted.pem')] : []),
      join(dir, 'leaf.pem'),
    ],
    inputs,
  );
}

/** The subject as openssl prints it in RFC 2253 form (most specific RDN first). */
export function opensslSubjectRfc2253(certPem: string): OpensslResult & { subject?: string } {
  const result = runOpenssl(
    (dir) => ['x509', '-in', join(dir, 'cert.pem'), '-noout', '-subject', '-nameopt', 'RFC2253'],
    { 'cert.pem': certPem },
  );
  const match = /^subject=\s*(.*)$/m.exec(result.output);
  return { ...result, subject: match?.[1] };
}

/** A throwaway self-signed certificate carrying `subjectAltName` (openssl -addext syntax). */
export function opensslReferenceCertificate(subjectAltName: string): OpensslResult {
  return runOpenssl(
    (dir) => [
      'req',
      '-x509',
      '-nodes',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=someCN',
      '-addext',
      `subjectAltName=${subjectAltName}`,
    ],
    {},
    ['cert.pem'],
  );
}

/**
 * A root CA made by openssl with an explicit config: RSA 2048 (key as PKCS#8), 10 years, critical
 * BasicConstraints CA:TRUE and KeyUsage keyCertSign/cRLSign, subject and authority key identifiers.
 */
export function opensslRootCa(commonName: string): { certPem: string; keyPem: string } {
  const config = [
    '[req]',
    'distinguished_name = dn',
    'prompt = no',
    'x509_extensions = v3_ca',
    '[dn]',
    'O = certkit conformance',
    `CN = ${commonName}`,
    '[v3_ca]',
    'basicConstraints = critical,CA:TRUE',
    'keyUsage = critical,keyCertSign,cRLSign',
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid:always',
    '',
  ].join('\n');
  const result = runOpenssl(
    (dir) => [
      'req',
      '-x509',
      '-nodes',
      '-newkey',
      'rsa:2048',
      '-days',
      '3650',
      '-config',
      join(dir, 'ca.cnf'),
      '-keyout',
      join(dir, 'ca.key'),
      '-out',
      join(dir, 'ca.crt'),
    ],
    { 'ca.cnf': config },
    ['ca.key', 'ca.crt'],
  );
  if (!result.ok) throw new Error(`openssl could not make a CA: ${result.output}`);
  return { certPem: result.files['ca.crt'], keyPem: result.files['ca.key'] };
}
