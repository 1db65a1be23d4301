/** Structured log entries (one JSON object per line when printed); quiet by default. */
export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  [field: string]: unknown;
}

export type Logger = (entry: LogEntry) => void;

/** Prints errors only, as one JSON line on stderr: informers log every reconnect, which is routine. */
export const defaultLogger: Logger = (entry) => {
  if (entry.level !== 'error') return;
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry }, errorReplacer)}\n`);
};

export const silentLogger: Logger = () => {};

/** Errors serialise as `{}` by default; keep their message (and Status, for StatusErrors). */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const status = (value as { status?: unknown }).status;
    return status ? { message: value.message, status } : { message: value.message };
  }
  return value;
}

/** The error's message, for log fields. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
