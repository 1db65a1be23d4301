import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { ClientConfig } from './config.ts';
import {
  type ExecClusterInfo,
  type ExecConfig,
  execCredentials,
  validateExecConfig,
} from './exec-credentials.ts';
import { tokenFileCredentials } from './token-file.ts';
import { proxyFor } from './proxy.ts';

/**
 * Loads a kubeconfig the way client-go's clientcmd does for the parts a controller needs: the current or a
 * named context, its cluster (server, CA, insecure-skip-tls-verify, tls-server-name, proxy-url) and user (token,
 * tokenFile, client certificate, exec plugin). Several files in $KUBECONFIG are merged, the first file to
 * define a name (or current-context) winning; relative paths resolve against the file that holds them.
 */

export interface LoadKubeconfigOptions {
  /** A kubeconfig file; default: the files in $KUBECONFIG, else ~/.kube/config. */
  path?: string;
  /** The context to use instead of current-context. */
  context?: string;
  /** Environment to read KUBECONFIG and HOME-relative defaults from; default process.env. */
  env?: NodeJS.ProcessEnv;
}

interface Named<T> {
  value: T;
  /** The file this entry came from, for relative paths and messages. */
  file: string;
}

interface RawCluster {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
  extensions?: { name: string; extension: unknown }[];
}

interface RawUser {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  'auth-provider'?: { name?: string };
}

interface RawContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

interface MergedKubeconfig {
  files: string[];
  currentContext?: string;
  clusters: Map<string, Named<RawCluster>>;
  users: Map<string, Named<RawUser>>;
  contexts: Map<string, Named<RawContext>>;
}

/**
 * Reads a kubeconfig as kubectl does (--kubeconfig, else $KUBECONFIG's files merged, else ~/.kube/config),
 * and resolves its current or given context into a ClientConfig.
 */
export async function loadKubeconfig(options: LoadKubeconfigOptions = {}): Promise<ClientConfig> {
  const files = await kubeconfigFiles(options);
  const merged = await mergeFiles(files);
  return resolveContext(merged, options.context);
}

/** The files to read: the given path, else the existing files of $KUBECONFIG, else ~/.kube/config. */
async function kubeconfigFiles(options: LoadKubeconfigOptions): Promise<string[]> {
  if (options.path) return [resolve(options.path)];
  const env = options.env ?? process.env;
  const list = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (list.length > 0) {
    const existing: string[] = [];
    for (const file of list) if (await isFile(file)) existing.push(resolve(file));
    if (existing.length === 0)
      throw new Error(`none of the kubeconfig files in KUBECONFIG exist: ${list.join(', ')}`);
    return [...new Set(existing)];
  }
  const home = env.HOME || homedir();
  const fallback = join(home, '.kube', 'config');
  if (!(await isFile(fallback))) {
    throw new Error(`no kubeconfig: KUBECONFIG is not set and ${fallback} does not exist`);
  }
  return [fallback];
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * A kubeconfig's text as data. JSON (which is YAML too, and what clientcmd also reads) is parsed as JSON: the
 * YAML library is imported only for a file that is not JSON. It is imported here, not at the top: a
 * controller in a pod reads its service account, never a kubeconfig, and the YAML library (~5 MB of RSS once
 * loaded: ~70 files) would stay in memory for nothing; a controller given a JSON kubeconfig does not load it
 * either.
 */
async function parseKubeconfigText(text: string): Promise<unknown> {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // A YAML flow mapping (`{clusters: []}`) is not JSON: the YAML parser reads it, or says what is wrong.
    }
  }
  const { parse: parseYaml } = await import('yaml');
  return parseYaml(text) as unknown;
}

/** Why a kubeconfig file could not be read, in words: Node's message repeats the path (`open '/x'`). */
function unreadable(err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException;
  const words: Record<string, string> = {
    ENOENT: 'no such file',
    EISDIR: 'is a directory, not a file',
    EACCES: 'permission denied',
  };
  return code && words[code] ? `${words[code]} (${code})` : message;
}

async function mergeFiles(files: string[]): Promise<MergedKubeconfig> {
  const merged: MergedKubeconfig = { files, clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const file of files) {
    let doc: unknown;
    try {
      doc = await parseKubeconfigText(await readFile(file, 'utf8'));
    } catch (err) {
      throw new Error(`kubeconfig ${file}: ${unreadable(err)}`, { cause: err });
    }
    if (doc === null || doc === undefined) continue; // an empty file is an empty config, as in clientcmd
    if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`kubeconfig ${file}: not a mapping`);
    const config = doc as Record<string, unknown>;
    const current = config['current-context'];
    if (!merged.currentContext && typeof current === 'string' && current !== '')
      merged.currentContext = current;
    collect(merged.clusters, config.clusters, 'cluster', file);
    collect(merged.users, config.users, 'user', file);
    collect(merged.contexts, config.contexts, 'context', file);
  }
  return merged;
}

function collect<T>(into: Map<string, Named<T>>, list: unknown, field: string, file: string): void {
  if (list === null || list === undefined) return;
  if (!Array.isArray(list)) throw new Error(`kubeconfig ${file}: ${field}s is not a list`);
  for (const entry of list as { name?: unknown; [k: string]: unknown }[]) {
    if (typeof entry?.name !== 'string') throw new Error(`kubeconfig ${file}: a ${field} entry has no name`);
    // The first file to define a name wins, as clientcmd merges.
    if (!into.has(entry.name)) into.set(entry.name, { value: (entry[field] ?? {}) as T, file });
  }
}

async function resolveContext(
  config: MergedKubeconfig,
  requested: string | undefined,
): Promise<ClientConfig> {
  const where = config.files.join(', ');
  const contextName = requested ?? config.currentContext;
  if (!contextName)
    throw new Error(`kubeconfig ${where}: no current-context is set and no context was given`);
  const context = config.contexts.get(contextName);
  if (!context) throw new Error(`context "${contextName}" not found in ${where}`);
  const { cluster: clusterName, user: userName, namespace } = context.value;
  if (!clusterName) throw new Error(`context "${contextName}" in ${context.file} names no cluster`);
  const cluster = config.clusters.get(clusterName);
  if (!cluster) throw new Error(`cluster "${clusterName}" of context "${contextName}" not found in ${where}`);
  const user = userName ? config.users.get(userName) : undefined;
  if (userName && !user)
    throw new Error(`user "${userName}" of context "${contextName}" not found in ${where}`);

  const result = await clusterConfig(clusterName, cluster);
  if (user) await applyUser(result, userName!, user, cluster.value);
  result.namespace = namespace || 'default';
  return result;
}

async function clusterConfig(
  name: string,
  { value: cluster, file }: Named<RawCluster>,
): Promise<ClientConfig> {
  if (!cluster.server) throw new Error(`cluster "${name}" in ${file} has no server`);
  if (!URL.canParse(cluster.server))
    throw new Error(`cluster "${name}" in ${file}: server is not a URL: ${cluster.server}`);
  const config: ClientConfig = { server: cluster.server };
  const ca = await dataOrFile(
    cluster['certificate-authority-data'],
    cluster['certificate-authority'],
    file,
    `certificate-authority of cluster "${name}"`,
  );
  if (ca) config.ca = ca;
  if (cluster['insecure-skip-tls-verify']) {
    if (ca)
      throw new Error(
        `cluster "${name}" in ${file}: specifying a root certificates file with the insecure flag is not allowed`,
      );
    config.insecureSkipTlsVerify = true;
  }
  if (cluster['tls-server-name']) config.tlsServerName = cluster['tls-server-name'];
  if (cluster['proxy-url']) {
    try {
      proxyFor(new URL(cluster.server), cluster['proxy-url'], {});
    } catch (err) {
      throw new Error(`cluster "${name}" in ${file}: ${(err as Error).message}`);
    }
    config.proxyUrl = cluster['proxy-url'];
  }
  return config;
}

async function applyUser(
  config: ClientConfig,
  name: string,
  { value: user, file }: Named<RawUser>,
  cluster: RawCluster,
): Promise<void> {
  if (user['auth-provider']) {
    throw new Error(
      `user "${name}" in ${file}: auth-provider "${user['auth-provider'].name ?? ''}" is not supported; use an exec credential plugin`,
    );
  }
  const cert = await dataOrFile(
    user['client-certificate-data'],
    user['client-certificate'],
    file,
    `client-certificate of user "${name}"`,
  );
  const key = await dataOrFile(
    user['client-key-data'],
    user['client-key'],
    file,
    `client-key of user "${name}"`,
  );
  if (cert && !key)
    throw new Error(
      `client-key-data or client-key must be specified for ${name} to use the clientCert authentication method`,
    );
  if (key && !cert)
    throw new Error(
      `client-certificate-data or client-certificate must be specified for ${name} to use the clientCert authentication method`,
    );
  if (cert && key) {
    config.cert = cert;
    config.key = key;
  }

  if (user.exec) {
    const exec: ExecConfig = { ...user.exec };
    validateExecConfig(exec, name);
    exec.interactiveMode ??= 'IfAvailable';
    // Only a command given as a path is relative to the kubeconfig; a bare name is looked up in PATH.
    if (exec.command.includes('/') && !isAbsolute(exec.command))
      exec.command = join(dirname(file), exec.command);
    config.credentials = execCredentials(exec, { cluster: execClusterInfo(cluster, config.ca) });
  } else if (user.tokenFile) {
    const path = isAbsolute(user.tokenFile) ? user.tokenFile : join(dirname(file), user.tokenFile);
    const provider = tokenFileCredentials(path);
    // Read now, so a missing file is reported when the config is loaded rather than at the first request.
    await provider.get();
    config.credentials = provider;
  } else if (user.token) {
    config.token = user.token;
  } else if ((user.username || user.password) && !cert) {
    throw new Error(`user "${name}" in ${file}: basic authentication (username/password) is not supported`);
  }
}

function execClusterInfo(cluster: RawCluster, ca: string | undefined): ExecClusterInfo {
  const info: ExecClusterInfo = { server: cluster.server! };
  if (cluster['tls-server-name']) info['tls-server-name'] = cluster['tls-server-name'];
  if (cluster['insecure-skip-tls-verify']) info['insecure-skip-tls-verify'] = true;
  if (cluster['proxy-url']) info['proxy-url'] = cluster['proxy-url'];
  if (ca) info['certificate-authority-data'] = Buffer.from(ca, 'utf8').toString('base64');
  const extension = cluster.extensions?.find((e) => e.name === 'client.authentication.k8s.io/exec');
  if (extension) info.config = extension.extension;
  return info;
}

/** `*-data` (base64, wins when both are set, as in client-go) or the file it names, as a UTF-8 string. */
async function dataOrFile(
  data: string | undefined,
  path: string | undefined,
  file: string,
  what: string,
): Promise<string | undefined> {
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  if (!path) return undefined;
  const absolute = isAbsolute(path) ? path : join(dirname(file), path);
  try {
    return await readFile(absolute, 'utf8');
  } catch (err) {
    throw new Error(`reading ${what} from ${absolute}: ${(err as Error).message}`, { cause: err });
  }
}
