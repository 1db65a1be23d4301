import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The data dir holds the CA and serving keys, the admin token and every Secret (in state.db and its WAL): it
 * and everything certkit writes in it are owner-only, whatever the umask or what was there before.
 */
const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

/** Directories certkit makes in the data dir, relative to it ('' is the data dir itself). */
const DIRS = ['', 'pki'];

/**
 * Files certkit writes in the data dir. New ones are created owner-only; these are the ones whose mode is
 * checked at start, since files left by an older version or put there by hand may be wider. SQLite's -wal,
 * -shm and -journal files take state.db's mode when SQLite creates them.
 */
const FILES = [
  'lock',
  'token',
  'sa.key',
  'kubeconfig',
  'state.db',
  'state.db-wal',
  'state.db-shm',
  'state.db-journal',
  'pki/ca.key',
  'pki/ca.crt',
  'pki/apiserver.key',
  'pki/apiserver.crt',
];

/** Makes `dir` if missing and sets it owner-only (0700), with a warning when it was wider. */
export async function ensurePrivateDataDir(dir: string, warn: (line: string) => void): Promise<void> {
  // mkdir's mode applies to the directories it makes, never to an existing one: hence the check below.
  await makeDirs(dir);
  await restrict(dir, PRIVATE_DIR_MODE, warn);
}

/**
 * `mkdir -p`. Node's recursive mkdir loops for ever where making a directory fails with ENOENT although its
 * parent exists (under /proc, say): it makes the parent, which exists, and tries again. So the directory is
 * made alone first, and the recursive mkdir is only for a missing parent.
 */
async function makeDirs(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: PRIVATE_DIR_MODE });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && (await stat(dir)).isDirectory()) return;
    if (code !== 'ENOENT' || (await isDirectory(dirname(dir)))) throw err;
  }
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Sets what certkit keeps in `dir` owner-only (0600, directories 0700), with a warning for each that was wider. */
export async function restrictDataDirFiles(dir: string, warn: (line: string) => void): Promise<void> {
  for (const name of DIRS) if (name !== '') await restrict(join(dir, name), PRIVATE_DIR_MODE, warn);
  for (const name of FILES) await restrict(join(dir, name), PRIVATE_FILE_MODE, warn);
}

/** Sets `path` to `mode` if it grants anything beyond it; a missing path is left missing. */
async function restrict(path: string, mode: number, warn: (line: string) => void): Promise<void> {
  let current: number;
  try {
    current = (await stat(path)).mode & 0o7777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if ((current & ~mode) === 0) return;
  await chmod(path, mode);
  warn(`${path} had mode ${octal(current)}, open to other users; set it to ${octal(mode)}`);
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}
