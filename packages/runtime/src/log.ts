/**
 * Structured logs: one JSON object per line, quiet by default (errors only); see CONTRIBUTING.md. A Logger is
 * a plain function so tests can capture entries and programs can forward them anywhere.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One structured log entry: a level, a message, and any fields. */
export interface LogEntry {
  level: LogLevel;
  msg: string;
  [field: string]: unknown;
}

/** Where the runtime's components send their log entries (`jsonLogger`, or any function). */
export type Logger = (entry: LogEntry) => void;

const rank: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Writes entries at `minLevel` or above to `out` (stderr by default) as JSON lines with a timestamp. */
export function jsonLogger(
  minLevel: LogLevel = 'error',
  out: { write(s: string): unknown } = process.stderr,
): Logger {
  return (entry) => {
    if (rank[entry.level] < rank[minLevel]) return;
    out.write(`${JSON.stringify({ ts: new Date().toISOString(), ...entry }, errorReplacer)}\n`);
  };
}

/** Errors only: informers log every reconnect, which is routine. */
export const defaultLogger: Logger = jsonLogger('error');

/** Drops every entry. */
export const silentLogger: Logger = () => {};

/** Errors serialise as `{}` by default; keep their message (and Status, for StatusErrors). */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const status = (value as { status?: unknown }).status;
    return status ? { message: value.message, status } : { message: value.message, stack: value.stack };
  }
  return value;
}

/** An error's message for a log field, whatever was thrown. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
