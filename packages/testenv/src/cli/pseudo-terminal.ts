import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv } from './cli-process.ts';

/**
 * `certkit ...` with its stderr on a pseudo-terminal, as a user at a terminal runs it, through util-linux's
 * `script` (in every Debian install: bsdutils is essential). stdout goes to a pipe, as in `certkit renew --all
 * > log`, so what the terminal shows is stderr alone and stdout can be checked apart.
 */

const execFileAsync = promisify(execFile);

/** Single-quoted for sh. */
function quote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

export async function runCliOnTerminal(
  args: string[],
  stdoutFile: string,
): Promise<{ code: number; terminal: string }> {
  const command = [process.execPath, CERTKIT_BIN, ...args].map(quote).join(' ');
  // -q: no "Script started" lines; -e: script exits with the command's status; the typescript goes nowhere.
  // stty gives the terminal a width: script's pty starts with 0 columns when its own stdin is no terminal.
  const shell = `stty cols 120 2>/dev/null; exec ${command} > ${quote(stdoutFile)}`;
  try {
    const { stdout } = await execFileAsync('script', ['-qec', shell, '/dev/null'], {
      timeout: 60_000,
      env: certkitEnv(),
    });
    return { code: 0, terminal: stdout };
  } catch (err) {
    const e = err as { code: number | string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error('`script` (util-linux, Debian package bsdutils) is not installed');
    return { code: Number(e.code), terminal: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
