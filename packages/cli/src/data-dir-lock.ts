import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** Held by the process serving a data dir; released on close or, whatever ends the process, by the kernel. */
export interface DataDirLock {
  release(): void;
}

/** Another live process serves the data dir. */
export class DataDirInUseError extends Error {}

const SQLITE_BUSY = 5;

/**
 * Takes the data dir's lock, or throws DataDirInUseError at once if another process holds it.
 *
 * The lock is SQLite's exclusive lock on `DIR/lock`, an empty database: a POSIX record lock, which the kernel
 * drops when its process ends, SIGKILL included, so a crashed server never leaves a stale lock behind (a pid
 * file would, and its pid may be reused: a container's server is always pid 1). See docs/adr/0701-data-dir-lock.md.
 */
export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, 'lock');
  // Created owner-only like every file of the data dir (SQLite would make it 0644 less the umask).
  closeSync(openSync(path, 'a', 0o600));
  // No busy timeout: a held lock answers "in use" at once instead of waiting for it.
  const db = new DatabaseSync(path, { timeout: 0 });
  try {
    // The transaction never writes; an in-memory journal keeps SQLite from creating lock-journal beside it.
    db.exec('PRAGMA journal_mode = MEMORY');
    // Held until release() or the end of the process: the exclusive lock is taken at BEGIN and kept while
    // the transaction is open.
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    const code = (err as { errcode?: unknown }).errcode;
    if (typeof code === 'number' && (code & 0xff) === SQLITE_BUSY) {
      throw new DataDirInUseError(
        `data dir ${dir} is in use by another certkit process (it holds ${path}); stop it or use another --data-dir`,
      );
    }
    throw err;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      db.close();
    },
  };
}
