import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

/**
 * Flags are declared once, as tables of FlagSpec: node:util's parseArgs reads the arguments from them, and
 * `--help` and the shell completion scripts are generated from the same tables, so the help cannot drift from
 * what the parser accepts (docs/adr/1820-cli-flag-tables-over-parseargs.md).
 */

/** A command-line mistake: printed as one line, exit status 2. */
export class UsageError extends Error {}

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** One letter, as `-n` for `--namespace`. */
  short?: string;
  default?: string | boolean;
  /** Whether the flag may be given more than once; its value is then an array. */
  multiple?: boolean;
  /** The value's placeholder in the help, e.g. `DIR` in `--data-dir DIR` (string flags only). */
  value?: string;
  /** One line (more if it must) saying what the flag does; the default is appended by the help. */
  help: string;
}

/** A command's flags by long name. Adding a flag is one entry here. */
export type FlagTable = Readonly<Record<string, FlagSpec>>;

export type FlagValues = Record<string, string | boolean | undefined>;

/** `-h/--help`, which every command takes. */
export const HELP_FLAG: FlagTable = {
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
};

/** The table as parseArgs takes it (without the help text, which parseArgs does not know). */
export function parseArgsOptions(table: FlagTable): ParseArgsOptionsConfig {
  return Object.fromEntries(
    Object.entries(table).map(([name, spec]) => [
      name,
      {
        type: spec.type,
        ...(spec.short === undefined ? {} : { short: spec.short }),
        ...(spec.multiple ? { multiple: true } : {}),
        ...(spec.default === undefined ? {} : { default: spec.default }),
      },
    ]),
  ) as ParseArgsOptionsConfig;
}

/** The defaults of a table, as parsed values: what a command gets for the flags it was not given. */
export function flagDefaults(table: FlagTable): FlagValues {
  return Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, spec.default]));
}

/** What Go's strconv.ParseBool takes, which pflag's boolean flags read after `=`. */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * pflag's boolean flags also take a value after `=` (`--all-namespaces=true`, as scripts written for kubectl
 * and cmctl say it), which parseArgs refuses. Rewritten before parsing: a true value is the flag alone; a
 * false one drops it and every earlier occurrence, since the last one wins, as in pflag.
 */
function withBooleanValues(table: FlagTable, args: string[]): string[] {
  const out: string[] = [];
  for (const [i, arg] of args.entries()) {
    if (arg === '--') return [...out, ...args.slice(i)];
    const m = /^--([^=]+)=(.*)$/s.exec(arg);
    if (!m || table[m[1]]?.type !== 'boolean') {
      out.push(arg);
      continue;
    }
    const [, name, value] = m;
    if (GO_TRUE.has(value)) {
      out.push(`--${name}`);
    } else if (GO_FALSE.has(value)) {
      const short = table[name].short;
      const given = (a: string) => a === `--${name}` || (short !== undefined && a === `-${short}`);
      for (let j = out.length - 1; j >= 0; j--) if (given(out[j])) out.splice(j, 1);
    } else {
      throw new UsageError(`--${name} must be true or false, got ${JSON.stringify(value)}`);
    }
  }
  return out;
}

/** Parses `args` against `table`; an unknown flag or a missing value is a UsageError (one line, exit 2). */
export function parseFlags(
  table: FlagTable,
  args: string[],
  { positionals = false }: { positionals?: boolean } = {},
): { values: FlagValues; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args: withBooleanValues(table, args),
      options: parseArgsOptions(table),
      strict: true,
      allowPositionals: positionals,
    });
    return { values: parsed.values as FlagValues, positionals: parsed.positionals };
  } catch (err) {
    // parseArgs's own message goes on about positionals after `--`; cobra's one line says it all.
    const e = err as Error & { code?: string };
    const unknown = /^Unknown option '([^']+)'/.exec(e.message);
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
      throw new UsageError(`unknown flag: ${unknown[1]} (see --help)`);
    }
    // Cobra's words for a flag without its value; one that starts with a dash must be joined with "=".
    const missing = /^Option '(?:-\w, )?(--?[^\s']+)(?: <value>)?' argument missing/.exec(e.message);
    if (missing) throw new UsageError(`flag needs an argument: ${missing[1]}`);
    // parseArgs's "This command does not take positional arguments" is said in the CLI's own words, as for
    // the commands that check their arguments themselves (`certkit controller takes no arguments`).
    const stray = /^Unexpected argument '([^']*)'/.exec(e.message);
    if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && stray) {
      throw new UsageError(
        `unexpected argument ${JSON.stringify(stray[1])}: this command takes flags only (see --help)`,
      );
    }
    const ambiguous = /^Option '(--?[^\s']+)' argument is ambiguous/.exec(e.message);
    if (ambiguous) {
      const flag = ambiguous[1];
      const long = flag.startsWith('--')
        ? flag
        : `--${Object.keys(table).find((name) => table[name].short === flag.slice(1)) ?? flag.slice(1)}`;
      throw new UsageError(
        `flag needs an argument: ${flag} (a value that starts with "-" is written ${long}=VALUE)`,
      );
    }
    throw new UsageError(e.message.split('\n')[0]);
  }
}

/**
 * Whether `-h` or `--help` is among the arguments as a flag, not as another flag's value (`--context -h` names
 * a context) nor after `--`. Unknown flags are let through: asking for help wins over a mistake beside it.
 */
export function asksForHelp(table: FlagTable, args: string[]): boolean {
  const { tokens } = parseArgs({
    args,
    options: parseArgsOptions({ ...table, ...HELP_FLAG }),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.some((t) => t.kind === 'option' && t.name === 'help');
}

/** `-n, --namespace NS`: how a flag is written in the help. */
export function flagSynopsis(name: string, spec: FlagSpec): string {
  const long = `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
  return spec.short === undefined ? `    ${long}` : `-${spec.short}, ${long}`;
}

/** The flags section of a help: one flag a line (or more), aligned, with its default. */
export function formatFlags(table: FlagTable): string {
  const entries = Object.entries(table).sort(([a], [b]) => a.localeCompare(b));
  const synopses = entries.map(([name, spec]) => flagSynopsis(name, spec));
  const width = Math.min(Math.max(...synopses.map((s) => s.length)), 44);
  return entries
    .map(([, spec], i) => {
      const text =
        spec.default === undefined || spec.default === false
          ? spec.help
          : `${spec.help} (default ${JSON.stringify(spec.default)})`;
      const [first, ...rest] = text.split('\n');
      const synopsis = synopses[i];
      const head =
        synopsis.length > width
          ? `  ${synopsis}\n  ${' '.repeat(width)}   ${first}`
          : `  ${synopsis.padEnd(width)}   ${first}`;
      return [head, ...rest.map((line) => `  ${' '.repeat(width)}   ${line}`)].join('\n');
    })
    .join('\n');
}
