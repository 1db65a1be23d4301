import { dirname } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE, writeFileAtomic } from './files.ts';

export interface KubeconfigOptions {
  /** API server URL, e.g. https://127.0.0.1:6443. */
  server: string;
  caCertPem: string;
  token: string;
  /** Name of the cluster, user and context entries; `certkit` unless given. */
  name?: string;
}

/** A kubeconfig for `options.server` that trusts `options.caCertPem` and authenticates with the bearer token. */
export function kubeconfigYaml(options: KubeconfigOptions): string {
  const name = options.name ?? 'certkit';
  if (!name) throw new Error('kubeconfig: name must not be empty');
  if (!URL.canParse(options.server)) throw new Error(`kubeconfig: server is not a URL: ${options.server}`);
  if (!options.token) throw new Error('kubeconfig: token must not be empty');
  const q = yamlString;
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(name)}`,
    '  cluster:',
    `    server: ${q(options.server)}`,
    // kubeconfig carries the PEM file's bytes base64-encoded, not the DER.
    `    certificate-authority-data: ${q(Buffer.from(options.caCertPem, 'utf8').toString('base64'))}`,
    'users:',
    `- name: ${q(name)}`,
    '  user:',
    `    token: ${q(options.token)}`,
    'contexts:',
    `- name: ${q(name)}`,
    '  context:',
    `    cluster: ${q(name)}`,
    `    user: ${q(name)}`,
    `current-context: ${q(name)}`,
    'preferences: {}',
    '',
  ].join('\n');
}

/** Writes the kubeconfig owner-readable only (it holds the admin token), replacing any file atomically. */
export async function writeKubeconfig(path: string, options: KubeconfigOptions): Promise<void> {
  const yaml = kubeconfigYaml(options);
  await ensurePrivateDir(dirname(path));
  await writeFileAtomic(path, yaml, PRIVATE_FILE_MODE);
}

/**
 * A double-quoted YAML scalar. JSON string syntax is valid YAML, so quoting every value sidesteps YAML's
 * plain-scalar pitfalls ('yes', '1e3', ': ', '#', leading '*' ...). JSON leaves some characters raw that YAML
 * does not allow unescaped (DEL, C1 controls, BOM) or that some parsers treat as line breaks (U+2028/9).
 */
export function yamlString(value: string): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
