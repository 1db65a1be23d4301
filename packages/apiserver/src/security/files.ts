import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Owner-only: these directories hold private keys and the admin token. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Writes `data` to a fresh temp file beside `path`, created with `mode` from the start so a secret is never
 * readable by others, even briefly. Returns the temp path; the caller moves it into place.
 */
async function writeTemp(path: string, data: string, mode: number): Promise<string> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    // Without the fsync a crash shortly after the rename can leave an empty file under the final name.
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  return temp;
}

/** Replaces `path` so readers see either the old content or the new, never a partial write. */
export async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const temp = await writeTemp(path, data, mode);
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/**
 * Creates `path` with `data` only if it does not exist yet, atomically. Returns false when another writer got
 * there first, so concurrent starters can agree on whichever file won instead of overwriting each other.
 */
export async function createFileExclusive(path: string, data: string, mode: number): Promise<boolean> {
  const temp = await writeTemp(path, data, mode);
  try {
    // link(2), unlike rename(2), refuses to replace an existing file.
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** mkdir -p that leaves any directory it creates private. */
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * A file's text, or undefined when it does not exist. Other read errors (permissions, a directory) are thrown:
 * a key or token that is there but unreadable must not be taken as missing and silently replaced.
 */
export async function readFileIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
