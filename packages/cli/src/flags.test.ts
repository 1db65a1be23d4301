import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS } from './command-table.ts';
import {
  asksForHelp,
  type FlagTable,
  formatFlags,
  parseArgsOptions,
  parseFlags,
  UsageError,
} from './flags.ts';
import { commandHelp } from './help.ts';
import { logSettings } from './log-flags.ts';

const TABLE = {
  context: { type: 'string', value: 'NAME', help: 'the context' },
  namespace: { type: 'string', short: 'n', value: 'NS', help: 'the namespace' },
  all: { type: 'boolean', default: false, help: 'every one' },
  port: { type: 'string', default: '6443', value: 'N', help: 'the port\nsecond line' },
} as const satisfies FlagTable;

describe('flag tables', () => {
  it('parses long, short and defaulted flags from the table', () => {
    const { values, positionals } = parseFlags(TABLE, ['-n', 'ns', '--all', 'x'], { positionals: true });
    assert.deepEqual({ ...values }, { namespace: 'ns', all: true, port: '6443' });
    assert.deepEqual(positionals, ['x']);
  });

  it('refuses an unknown flag with one line naming it, as a UsageError', () => {
    for (const flag of ['--bogus', '-x']) {
      assert.throws(
        () => parseFlags(TABLE, [flag]),
        (err: unknown) => err instanceof UsageError && err.message === `unknown flag: ${flag} (see --help)`,
      );
    }
    assert.throws(
      () => parseFlags(TABLE, ['stray']),
      (err: unknown) =>
        err instanceof UsageError &&
        err.message === 'unexpected argument "stray": this command takes flags only (see --help)',
    );
  });

  it("a boolean flag takes pflag's =true and =false (strconv.ParseBool's words); the last one wins", () => {
    const table = {
      ...TABLE,
      'all-namespaces': { type: 'boolean', short: 'A', help: 'every namespace' },
    } as const;
    const parsed = (args: string[]) => parseFlags(table, args).values;
    assert.equal(parsed(['--all=true']).all, true);
    assert.equal(parsed(['--all=1']).all, true);
    assert.equal(parsed(['--all=false']).all, false);
    assert.equal(parsed(['--all', '--all=False']).all, false);
    assert.equal(parsed(['--all=false', '--all']).all, true);
    assert.equal(parsed(['-A', '--all-namespaces=0'])['all-namespaces'], undefined);
    assert.equal(parsed(['--all-namespaces=T'])['all-namespaces'], true);
    // After `--`, nothing is a flag.
    assert.deepEqual(parseFlags(TABLE, ['--', '--all=false'], { positionals: true }).positionals, [
      '--all=false',
    ]);
    assert.throws(
      () => parseFlags(TABLE, ['--all=yes']),
      (err: unknown) => err instanceof UsageError && err.message === '--all must be true or false, got "yes"',
    );
    // A string flag's value is left alone.
    assert.equal(parseFlags(TABLE, ['--context=false']).values.context, 'false');
  });

  it('a flag without its value, or with one that looks like a flag: cobra’s one line, and how to write it', () => {
    const refused = (args: string[], message: string) =>
      assert.throws(
        () => parseFlags(TABLE, args),
        (err: unknown) => err instanceof UsageError && err.message === message,
      );
    refused(['--context'], 'flag needs an argument: --context');
    refused(['-n'], 'flag needs an argument: --namespace');
    refused(
      ['--port', '-1'],
      'flag needs an argument: --port (a value that starts with "-" is written --port=VALUE)',
    );
    refused(
      ['-n', '-A'],
      'flag needs an argument: -n (a value that starts with "-" is written --namespace=VALUE)',
    );
  });

  it('gives parseArgs the table without the help text', () => {
    assert.deepEqual(parseArgsOptions(TABLE).namespace, { type: 'string', short: 'n' });
    assert.deepEqual(parseArgsOptions(TABLE).port, { type: 'string', default: '6443' });
  });

  it('finds -h/--help as a flag, not as the value of another flag nor after --', () => {
    assert.equal(asksForHelp(TABLE, ['--help']), true);
    assert.equal(asksForHelp(TABLE, ['-n', 'ns', '-h']), true);
    assert.equal(asksForHelp(TABLE, ['--bogus', '--help']), true);
    assert.equal(asksForHelp(TABLE, ['--context', '-h']), false);
    assert.equal(asksForHelp(TABLE, ['--context=--help']), false);
    assert.equal(asksForHelp(TABLE, ['--', '--help']), false);
    assert.equal(asksForHelp(TABLE, ['-n', 'ns']), false);
  });

  it('formats each flag once, sorted, with its value placeholder, short form and default', () => {
    const text = formatFlags(TABLE);
    const lines = text.split('\n');
    assert.match(lines[0], /^ {6}--all {3,}every one$/);
    assert.match(text, /^ {6}--context NAME {3,}the context$/m);
    assert.match(text, /^ {2}-n, --namespace NS {3,}the namespace$/m);
    assert.match(text, /--port N {3,}the port\n {3,}second line \(default "6443"\)$/m);
  });
});

describe('command help', () => {
  it('says what -n does for each command: the controller watches every namespace without it', () => {
    const help = (name: string) =>
      commandHelp(
        [name],
        COMMANDS.find((c) => c.name === name)!,
      );
    assert.match(
      help('controller'),
      /-n, --namespace NS +watch only this namespace \(default: every namespace\)/,
    );
    assert.match(help('status'), /-n, --namespace NS +namespace \(default: the context’s\)/);
  });

  it('every command and subcommand in the table has a help naming each of its flags and -h', () => {
    const walk = (path: string[], commands = COMMANDS) => {
      for (const command of commands) {
        const here = [...path, command.name];
        const help = commandHelp(here, command);
        assert.match(help, new RegExp(`^usage: certkit ${here.join(' ')}`), here.join(' '));
        assert.match(help, /-h, --help/);
        for (const [name, spec] of Object.entries(command.flags)) {
          assert.ok(help.includes(`--${name}`), `${here.join(' ')} --help lacks --${name}`);
          if (spec.short)
            assert.ok(help.includes(`-${spec.short}, --${name}`), `${here.join(' ')} -${spec.short}`);
        }
        for (const sub of command.subcommands ?? []) assert.ok(help.includes(`  ${sub.name} `), sub.name);
        if (command.subcommands) walk(here, command.subcommands);
      }
    };
    walk([]);
  });

  it('the long-running commands take --log-level and -v', () => {
    for (const name of ['up', 'apiserver', 'controller']) {
      const command = COMMANDS.find((c) => c.name === name)!;
      assert.ok(command.flags['log-level'], name);
      assert.equal(command.flags.v?.short, 'v', name);
    }
  });
});

describe('logSettings', () => {
  const settings = (args: string[]) =>
    logSettings(
      parseFlags(
        { 'log-level': { type: 'string', help: '' }, v: { type: 'string', short: 'v', help: '' } },
        args,
      ).values,
    );

  it('is warnings and errors without flags, as before the flags existed', () => {
    assert.deepEqual(settings([]), { level: 'warn', verbosity: -1 });
  });

  it('maps klog verbosity: 0-3 info, 4+ debug, in each spelling pflag takes', () => {
    for (const [args, level, verbosity] of [
      [['-v', '0'], 'info', 0],
      [['-v3'], 'info', 3],
      [['-v=4'], 'debug', 4],
      [['--v=2'], 'info', 2],
      [['--v', '10'], 'debug', 10],
    ] as const) {
      assert.deepEqual(settings([...args]), { level, verbosity }, args.join(' '));
    }
  });

  it('takes --log-level, which wins over the level -v implies but keeps its verbosity', () => {
    assert.deepEqual(settings(['--log-level', 'debug']), { level: 'debug', verbosity: -1 });
    assert.deepEqual(settings(['--log-level=error', '-v', '3']), { level: 'error', verbosity: 3 });
  });

  it('refuses a level or verbosity it does not know, naming the flag', () => {
    assert.throws(() => settings(['--log-level', 'trace']), {
      message: '--log-level must be one of error, warn, info, debug, got "trace"',
    });
    assert.throws(() => settings(['-v', 'high']), {
      message: '-v must be a non-negative integer, got "high"',
    });
    assert.throws(() => settings(['-v', '-1']), UsageError);
  });
});
