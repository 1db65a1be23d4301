import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Whether an executable named `name` is in one of the `PATH` directories, as the shell would find it: what
 * `certkit up` checks before suggesting kubectl commands to a user who may not have kubectl yet.
 */
export function onPath(name: string, path = process.env.PATH ?? ''): boolean {
  return path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
