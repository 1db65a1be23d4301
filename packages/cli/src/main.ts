import { type Command, COMMANDS } from './command-table.ts';
import { TIMED_OUT_STATUS, TimedOut } from './exit-status.ts';
import { asksForHelp, parseFlags, UsageError } from './flags.ts';
import { commandHelp, TOP_FLAGS, topHelp } from './help.ts';

/**
 * `certkit <command> [subcommand] [flags]`: finds the command in the table (command-table.ts), answers
 * -h/--help from it, and runs it. A mistake on the command line is one line on stderr and exit status 2.
 */

function find(commands: readonly Command[], name: string, path: readonly string[]): Command {
  const command = commands.find((c) => c.name === name || c.aliases?.includes(name));
  if (command) return command;
  const where = path.length === 0 ? 'certkit' : `certkit ${path.join(' ')}`;
  throw new UsageError(
    `unknown command ${JSON.stringify(name)} for "${where}"; run "${where} --help" for the list`,
  );
}

/** The command being run, once found: its flags say whether its errors are the cluster's (see below). */
let running: Command | undefined;
/** Its words (`secrets audit`), for the help a mistake on its command line points to. */
let runningPath: readonly string[] = [];

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined || first === 'help') {
    // `certkit help [COMMAND...]`, as cobra's.
    if (rest.length === 0) return void process.stdout.write(topHelp(COMMANDS));
    let commands = COMMANDS;
    let command: Command | undefined;
    for (const [i, name] of rest.entries()) {
      command = find(commands, name, rest.slice(0, i));
      commands = command.subcommands ?? [];
    }
    return void process.stdout.write(commandHelp(rest, command!));
  }
  if (first.startsWith('-')) {
    const { values } = parseFlags(TOP_FLAGS, argv);
    if (values.version === true) {
      const version = find(COMMANDS, 'version', []);
      return version.run!([], version.flags);
    }
    return void process.stdout.write(topHelp(COMMANDS));
  }
  const path = [first];
  let command = find(COMMANDS, first, []);
  let args = rest;
  while (command.subcommands) {
    const [next, ...after] = args;
    if (next === undefined || next === '-h' || next === '--help') {
      return void process.stdout.write(commandHelp(path, command));
    }
    if (next.startsWith('-')) {
      throw new UsageError(
        `"certkit ${path.join(' ')}" needs a command first; run "certkit ${path.join(' ')} --help"`,
      );
    }
    command = find(command.subcommands, next, path);
    path.push(next);
    args = after;
  }
  if (asksForHelp(command.flags, args)) return void process.stdout.write(commandHelp(path, command));
  running = command;
  runningPath = path;
  return command.run!(args, command.flags);
}

main(process.argv.slice(2)).catch(async (err: unknown) => {
  let message = err instanceof Error ? err.message : String(err);
  // A command that takes --kubeconfig talks to that cluster: a refused connection, an unknown host, an
  // untrusted certificate or rejected credentials are said in words (`up` and `apiserver` take no
  // --kubeconfig; their socket errors are etcd's or their own listener's, said as they are).
  if (running?.flags.kubeconfig !== undefined) {
    message = (await import('./cluster-errors.ts')).describeConnectionError(err) ?? message;
  }
  // The flag parser knows the flags, not the command: point at that command's help, not the top one's.
  if (err instanceof UsageError && runningPath.length > 0) {
    message = message.replace('(see --help)', `(see "certkit ${runningPath.join(' ')} --help")`);
  }
  process.stderr.write(`certkit: ${message.split('\n')[0]}\n`);
  process.exit(err instanceof UsageError ? 2 : err instanceof TimedOut ? TIMED_OUT_STATUS : 1);
});
