import type { LogLevel } from '@certkit/runtime/log';
import { type FlagTable, type FlagValues, UsageError } from './flags.ts';

/**
 * How much the long-running commands (up, apiserver, controller) log, on stderr as JSON lines. Two ways to say
 * it: `--log-level`, or klog's `-v N` (`--v=N`, as cert-manager's and kube-apiserver's flags take it). Without
 * either: warnings and errors, as before these flags existed.
 *
 *   -v 0..3   info and above       -v 4+   debug too (klog's convention: V(4) is debug)
 *   -v 3+     also the API server's request log, one `"msg":"HTTP"` line a request, at the verbosity
 *             kube-apiserver's httplog writes it
 *   --log-level debug includes the request log; --log-level error|warn|info does not unless -v 3+ is given too.
 */
export const LOG_FLAGS = {
  'log-level': {
    type: 'string',
    value: 'error|warn|info|debug',
    help: 'the least severe entries written to stderr (default warn, or as -v says)',
  },
  v: {
    type: 'string',
    short: 'v',
    value: 'N',
    help: 'klog verbosity: 0-3 info, 4+ debug; the request log from 3',
  },
} as const satisfies FlagTable;

export interface LogSettings {
  level: LogLevel;
  /** klog verbosity: entries carrying a `v` at most this are written whatever their level. */
  verbosity: number;
}

const LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

/** The log settings the flags ask for; a mistake is a UsageError naming the flag. */
export function logSettings(values: FlagValues): LogSettings {
  const levelText = values['log-level'] as string | undefined;
  // `-v=4` reaches parseArgs as the short flag with the value "=4" (pflag reads it as 4).
  const vText = (values.v as string | undefined)?.replace(/^=/, '');
  let verbosity: number | undefined;
  if (vText !== undefined) {
    if (!/^\d+$/.test(vText))
      throw new UsageError(`-v must be a non-negative integer, got ${JSON.stringify(vText)}`);
    verbosity = Number(vText);
  }
  if (levelText !== undefined && !LEVELS.includes(levelText as LogLevel)) {
    throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(levelText)}`);
  }
  const level: LogLevel =
    (levelText as LogLevel | undefined) ??
    (verbosity === undefined ? 'warn' : verbosity >= 4 ? 'debug' : 'info');
  return { level, verbosity: verbosity ?? -1 };
}
