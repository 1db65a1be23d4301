import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Finding the real tools tests drive (etcd, pebble, kubectl, named, dig): a test skips, naming the tool, when
 * none is found, rather than failing on a spawn error.
 */

/** The first of `paths` that this process may execute, or undefined. */
export function firstExecutable(paths: Iterable<string>): string | undefined {
  for (const path of paths) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // try the next one
    }
  }
  return undefined;
}

/** `name` in `dirs`, then in the directories of $PATH, as a shell would find it; undefined when absent. */
export function findExecutable(name: string, dirs: readonly string[] = []): string | undefined {
  const searched = [...dirs, ...(process.env.PATH ?? '').split(delimiter)].filter(Boolean);
  return firstExecutable(searched.map((dir) => join(dir, name)));
}
