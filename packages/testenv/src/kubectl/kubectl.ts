import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from '../processes/executables.ts';

/** kubectl in tests: found on PATH (or the reason to skip), run with a given environment and work dir. */

const execFileAsync = promisify(execFile);

export const kubectlPath = findExecutable('kubectl');
/** Why kubectl suites skip, or false when kubectl is there. */
export const kubectlSkip: string | false = kubectlPath ? false : 'kubectl is not on PATH';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  /** Runs kubectl; never throws for a non-zero exit (the caller asserts on `code`). */
  run(...args: string[]): Promise<KubectlResult>;
  /** Runs kubectl and asserts it succeeded; returns stdout. */
  ok(...args: string[]): Promise<string>;
  /** Writes a manifest into the work dir; returns its path. */
  manifest(yaml: string): Promise<string>;
}

export function kubectlFor(env: NodeJS.ProcessEnv, workDir: string): Kubectl {
  let manifests = 0;
  const run = async (...args: string[]): Promise<KubectlResult> => {
    try {
      const { stdout, stderr } = await execFileAsync(kubectlPath!, args, { env, timeout: 30_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number | string; stdout?: string; stderr?: string };
      if (typeof e.code !== 'number') throw err;
      return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };
  return {
    run,
    async ok(...args) {
      const r = await run(...args);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    },
    async manifest(yaml) {
      const path = join(workDir, `manifest-${++manifests}.yaml`);
      await writeFile(path, yaml);
      return path;
    },
  };
}
