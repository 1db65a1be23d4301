/**
 * A data dir that cannot be made or written, said in one line naming the flag and the cause in words, instead
 * of Node's "ENOTDIR: not a directory, mkdir '…'" (which names neither the flag nor which path is wrong).
 */
export function dataDirError(dir: string, err: unknown): Error {
  const { code, path } = err as NodeJS.ErrnoException;
  const where = path && path !== dir ? ` (${path})` : '';
  const cause = CAUSES[code ?? ''];
  if (!cause) return err as Error;
  return new Error(`--data-dir ${dir}: ${cause}${where}; choose another --data-dir`, { cause: err });
}

const CAUSES: Record<string, string> = {
  EEXIST: 'is a file, not a directory',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ENOENT: 'cannot be made there (ENOENT)',
  EACCES: 'permission denied (EACCES): certkit needs to create and write files there',
  EPERM: 'operation not permitted (EPERM): certkit needs to create and write files there',
  EROFS: 'on a read-only file system (EROFS)',
  ENOSPC: 'no space left on the device (ENOSPC)',
};
