/**
 * glibc's `malloc_trim(0)`, called through node's `node:ffi` (docs/adr/1143-malloc-trimmed-after-a-burst.md).
 *
 * After a burst, the controller's main malloc arena (the `[heap]` mapping) holds ~20 MB at 3,000 Certificates
 * that it held ~5 MB of before: OpenSSL's parsed keys and certificates, HTTP and TLS buffers, all freed, but
 * scattered through the heap. `free()` gives back only the top of the heap (MALLOC_TRIM_THRESHOLD_, ADR 1111);
 * `malloc_trim(0)` walks every arena and returns each free page in the middle too (`MADV_DONTNEED`).
 *
 * Best effort: `node:ffi` is experimental (node 26 turns it on by default; `--no-experimental-ffi` or the
 * permission model without `--allow-ffi` take it away), and musl has no `malloc_trim`. Then this does
 * nothing and says so, once, by returning false; the caller logs it.
 */
type MallocTrim = (pad: bigint) => number;

interface FfiModule {
  dlopen(
    path: string,
    definitions: Record<string, { arguments: string[]; return: string }>,
  ): {
    functions: Record<string, (...args: unknown[]) => unknown>;
  };
}

// undefined: not looked up yet; null: not available in this process.
let mallocTrim: MallocTrim | null | undefined;

function lookUp(): MallocTrim | null {
  try {
    // Looked up at the first call, not imported: the module is experimental and emits its warning when loaded,
    // which a process that never bursts should not print.
    const ffi = withoutFfiWarning(() => process.getBuiltinModule('node:ffi') as FfiModule | undefined);
    if (!ffi) return null;
    // The name glibc's shared object has on every Linux it ships on; dlopen of a library already loaded
    // returns that one.
    const { functions } = ffi.dlopen('libc.so.6', {
      malloc_trim: { arguments: ['uint64'], return: 'int32' },
    });
    return functions.malloc_trim as MallocTrim;
  } catch {
    return null;
  }
}

/**
 * Loads node:ffi without its one-time ExperimentalWarning: the controller writes its logs as JSON lines, and
 * node would print the warning as plain text among them at the first release. Only that warning is dropped,
 * and only while the module loads; the release's own log line says whether the trim ran.
 */
function withoutFfiWarning<T>(load: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const message = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && message.startsWith('FFI ')) return;
    (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return load();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** Returns malloc's free pages to the system; false if this process cannot call `malloc_trim`. */
export function trimMalloc(): boolean {
  if (mallocTrim === undefined) mallocTrim = lookUp();
  if (mallocTrim === null) return false;
  try {
    mallocTrim(0n);
    return true;
  } catch {
    // The binding was made but refuses the call (an experimental module's options renamed): never again.
    mallocTrim = null;
    return false;
  }
}
