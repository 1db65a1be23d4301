import { flushCompileCache } from 'node:module';

/**
 * Imports a command's module and writes the compile cache (enabled by bin/certkit.js) right away, so that
 * the next start finds it even when this process ends by SIGKILL; without the cache this does nothing.
 */
export async function load<T>(module: Promise<T>): Promise<T> {
  const loaded = await module;
  flushCompileCache();
  return loaded;
}
