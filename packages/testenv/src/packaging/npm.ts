import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * npm exports its configuration to the scripts it runs as `npm_config_*` variables, and the repository's
 * .npmrc adds `--conditions=source` to NODE_OPTIONS. An npm or node started from a test for a directory
 * outside the repository must see neither: `npm_config_local_prefix` would make `npm install` write into the
 * repository, and the `source` condition would resolve the installed packages to sources they do not ship.
 * Kept: where npm caches and which user config and registry it reads, so an install stays warm and reaches the
 * same registry.
 */
const KEPT_NPM_VARIABLES = new Set(['npm_config_cache', 'npm_config_userconfig', 'npm_config_registry']);

/** This process's environment as a user's shell has it: no npm script variables, no NODE_OPTIONS. */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODE_OPTIONS') continue;
    if (key.toLowerCase().startsWith('npm_') && !KEPT_NPM_VARIABLES.has(key.toLowerCase())) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Runs `npm ARGS` in `cwd` with the user's environment; resolves with its stdout, or rejects with its
 * stderr in the message. The npm on PATH is the one a user would type.
 */
export async function npm(
  args: string[],
  cwd: string,
  env = userEnv(),
  timeoutMs = 240_000,
): Promise<string> {
  try {
    const { stdout } = await execFileAsync('npm', args, {
      cwd,
      env,
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`npm ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stderr ?? ''}`, {
      cause: err,
    });
  }
}
