import { spawn } from 'node:child_process';
import type { CredentialProvider, Credentials } from './config.ts';

/**
 * Credentials from a kubeconfig `exec` plugin (client.authentication.k8s.io v1 and v1beta1), as client-go's
 * plugin/pkg/client/auth/exec: the command runs with KUBERNETES_EXEC_INFO describing the request, prints an
 * ExecCredential whose status holds a token or a client certificate and key, and its answer is reused until
 * `expirationTimestamp` passes or a request made with it is answered 401.
 */

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/**
 * A kubeconfig user's `exec` section: the credential plugin's command, arguments, environment and API
 * version.
 */
export interface ExecConfig {
  apiVersion: string;
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
}

/** What the plugin learns about the cluster when `provideClusterInfo` is set (ExecCredentialSpec.cluster). */
export interface ExecClusterInfo {
  server: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  /** base64 of the PEM bundle, as in a kubeconfig. */
  'certificate-authority-data'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  /** The `client.authentication.k8s.io/exec` extension of the kubeconfig cluster. */
  config?: unknown;
}

export interface ExecCredentialsOptions {
  cluster?: ExecClusterInfo;
  /** Clock, for tests. */
  now?: () => number;
}

interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

/** Checks what client-go's kubeconfig validation and exec.newAuthenticator check before ever running it. */
export function validateExecConfig(exec: ExecConfig, user: string): void {
  if (!exec.command)
    throw new Error(`command must be specified for ${user} to use exec authentication plugin`);
  if (!EXEC_API_VERSIONS.includes(exec.apiVersion)) {
    throw new Error(`exec plugin: invalid apiVersion ${JSON.stringify(exec.apiVersion ?? '')}`);
  }
  // clientcmd defaults interactiveMode only for v1beta1; v1 must say it.
  if (exec.apiVersion.endsWith('/v1') && !exec.interactiveMode) {
    throw new Error(`interactiveMode must be specified for ${user} to use exec authentication plugin`);
  }
  if (exec.interactiveMode === 'Always') {
    // A controller has no terminal to prompt on; client-go refuses the same way when stdin is not one.
    throw new Error(`exec plugin cannot support interactive mode: standard input is not a terminal`);
  }
}

/**
 * Credentials from a client-go credential plugin (ExecCredential), run again when they expire or are refused.
 */
export function execCredentials(exec: ExecConfig, options: ExecCredentialsOptions = {}): CredentialProvider {
  const now = options.now ?? Date.now;
  let cached: Credentials | undefined;
  let expiresAt = Infinity;
  let running: Promise<Credentials> | undefined;

  const refresh = async (): Promise<Credentials> => {
    const status = await runPlugin(exec, options.cluster);
    const expiry = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Infinity;
    if (Number.isNaN(expiry)) {
      throw new Error(`exec plugin returned an invalid expirationTimestamp ${status.expirationTimestamp}`);
    }
    const credentials: Credentials = {};
    if (status.token) credentials.token = status.token;
    if (status.clientCertificateData) {
      credentials.cert = status.clientCertificateData;
      credentials.key = status.clientKeyData;
    }
    cached = Object.freeze(credentials);
    expiresAt = expiry;
    return cached;
  };

  return {
    get() {
      if (cached && now() < expiresAt) return Promise.resolve(cached);
      // Concurrent requests share one run of the plugin, so no one caller's signal may cancel it.
      running ??= refresh().finally(() => {
        running = undefined;
      });
      return running;
    },
    invalidate(used) {
      // Only the credentials still in use are dropped: if another request already refreshed them, the
      // plugin need not run again.
      if (used === cached) cached = undefined;
    },
  };
}

async function runPlugin(
  exec: ExecConfig,
  cluster: ExecClusterInfo | undefined,
): Promise<ExecCredentialStatus> {
  const execInfo = {
    apiVersion: exec.apiVersion,
    kind: 'ExecCredential',
    spec: { interactive: false, ...(exec.provideClusterInfo && cluster ? { cluster } : {}) },
  };
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const { name, value } of exec.env ?? []) env[name] = value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify(execInfo);

  const { stdout, stderr, exitCode, spawnError } = await new Promise<{
    stdout: string;
    stderr: string;
    exitCode: number | null;
    spawnError?: NodeJS.ErrnoException;
  }>((resolve) => {
    const child = spawn(exec.command, exec.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (e) => {
      spawnError = e;
    });
    child.on('close', (code) =>
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: code,
        spawnError,
      }),
    );
  });

  if (spawnError) {
    if (spawnError.code === 'ENOENT') {
      const hint = exec.installHint ? `\n\n${exec.installHint}` : '';
      throw new Error(`exec: executable ${exec.command} not found${hint}`);
    }
    throw new Error(`exec: ${spawnError.message}`, { cause: spawnError });
  }
  if (exitCode !== 0) {
    // client-go leaves the plugin's stderr on the terminal; a controller's operator only sees the error.
    const detail = stderr.trim() ? `: ${stderr.trim().slice(-1024)}` : '';
    throw new Error(`exec: executable ${exec.command} failed with exit code ${exitCode}${detail}`);
  }
  return parseExecCredential(exec.apiVersion, stdout);
}

/** Decodes and checks the plugin's output with client-go's messages. */
export function parseExecCredential(apiVersion: string, stdout: string): ExecCredentialStatus {
  let cred: { apiVersion?: unknown; kind?: unknown; status?: ExecCredentialStatus };
  try {
    cred = JSON.parse(stdout);
  } catch (err) {
    throw new Error(`decoding stdout: ${(err as Error).message}`);
  }
  if (typeof cred !== 'object' || cred === null || cred.kind !== 'ExecCredential') {
    throw new Error(`decoding stdout: expected an ExecCredential, got kind ${JSON.stringify(cred?.kind)}`);
  }
  if (cred.apiVersion !== apiVersion) {
    throw new Error(
      `exec plugin is configured to use API version ${apiVersion}, plugin returned version ${String(cred.apiVersion)}`,
    );
  }
  const status = cred.status;
  if (!status) throw new Error(`exec plugin didn't return a status field`);
  if (!status.token && !status.clientCertificateData && !status.clientKeyData) {
    throw new Error(`exec plugin didn't return a token or cert/key pair`);
  }
  if (!status.clientCertificateData !== !status.clientKeyData) {
    throw new Error(`exec plugin returned only certificate or key, not both`);
  }
  return status;
}
