import type { Command } from './command-table.ts';
import { type FlagTable, formatFlags, HELP_FLAG } from './flags.ts';

/** Flags certkit takes before any command. */
export const TOP_FLAGS: FlagTable = {
  ...HELP_FLAG,
  version: { type: 'boolean', help: 'print the version and exit (as `certkit version`)' },
};

function commandList(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return commands.map((c) => `  ${c.name.padEnd(width)}   ${c.summary}`).join('\n');
}

/** `certkit --help`: the commands and where to find their flags. */
export function topHelp(commands: readonly Command[]): string {
  return (
    'usage: certkit <command> [flags]\n\n' +
    `commands:\n${commandList(commands)}\n\n` +
    `flags:\n${formatFlags(TOP_FLAGS)}\n\n` +
    'Run "certkit <command> --help" for a command’s flags.\n'
  );
}

/** `certkit PATH... --help`: the command's usage, its subcommands or its flags, generated from the table. */
export function commandHelp(path: readonly string[], command: Command): string {
  const name = `certkit ${path.join(' ')}`;
  const description = command.description ? `${command.description}\n\n` : '';
  if (command.subcommands) {
    return (
      `usage: ${name} <command> [flags]\n\n${command.summary}\n\n${description}` +
      `commands:\n${commandList(command.subcommands)}\n\n` +
      `flags:\n${formatFlags(HELP_FLAG)}\n\n` +
      `Run "${name} <command> --help" for a command’s flags.\n`
    );
  }
  const aliases = command.aliases ? `aliases: ${[command.name, ...command.aliases].join(', ')}\n\n` : '';
  return (
    `usage: ${name}${command.args ? ` ${command.args}` : ''} [flags]\n\n${command.summary}\n\n${aliases}${description}` +
    `flags:\n${formatFlags({ ...command.flags, ...HELP_FLAG })}\n`
  );
}
