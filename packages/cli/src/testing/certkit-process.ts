import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `certkit` as a user runs it, in a child process: started, waited for, stopped. */

export const CERTKIT_MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'main.ts');

export interface CertkitProcess {
  child: ChildProcess;
  /** The URL it reported listening on. */
  url: string;
  output(): string;
  /** Ctrl-C, and its exit code. */
  stop(): Promise<number | null>;
}

export interface StartOptions {
  /** The open-file limit of the process (soft and hard), as `ulimit -n` sets it. */
  openFileLimit?: number;
}

/** Starts `certkit ARGS...` and resolves once it reports the URL it listens on. */
export function startCertkit(args: string[], options: StartOptions = {}): Promise<CertkitProcess> {
  const command = [process.execPath, CERTKIT_MAIN, ...args];
  const child = options.openFileLimit
    ? spawn('bash', ['-c', `ulimit -n ${options.openFileLimit} && exec "$@"`, 'certkit', ...command], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`certkit did not start within 20 s: ${out}`)), 20_000);
    child.stdout!.on('data', () => {
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        child,
        url: m[1],
        output: () => out,
        stop: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`certkit exited with ${code}: ${out}`));
    });
  });
}
