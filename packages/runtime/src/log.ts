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

/**
 * Writes entries at `minLevel` or above to `out` (stderr by default) as JSON lines, the time first under `ts`.
 * An entry that also carries a klog verbosity `v` (the API server's request log: debug, with v 3) is written
 * too when `v` is at most `verbosity`: so `-v 3` shows the request log without every other debug entry.
 */
export function jsonLogger(
  minLevel: LogLevel = 'error',
  out: { write(s: string): unknown } = process.stderr,
  verbosity = -1,
): Logger {
  return (entry) => {
    const v = entry.v;
    if (rank[entry.level] < rank[minLevel] && !(typeof v === 'number' && v <= verbosity)) return;
    out.write(`${JSON.stringify({ ts: new Date().toISOString(), ...entry }, errorReplacer)}\n`);
  };
}

/**
 * The logger with a name, as logr's WithName: entries get `logger: name`, or `name.theirs` when they name a
 * logger of their own, so a line says which part of the program wrote it.
 */
export function namedLogger(log: Logger, name: string): Logger {
  return ({ level, logger, ...fields }) =>
    // level, logger, msg: the order zap writes them in.
    log({ level, logger: typeof logger === 'string' ? `${name}.${logger}` : name, ...fields } as LogEntry);
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
