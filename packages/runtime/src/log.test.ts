import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonLogger, type LogEntry, namedLogger } from './log.ts';

function capture(): { out: { write(s: string): void }; entries(): Record<string, unknown>[] } {
  const lines: string[] = [];
  return {
    out: { write: (s) => void lines.push(s) },
    entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const entries: LogEntry[] = [
  { level: 'error', msg: 'e' },
  { level: 'warn', msg: 'w' },
  { level: 'info', msg: 'i' },
  { level: 'debug', msg: 'd' },
  // The API server's request log: debug, at klog verbosity 3.
  { level: 'debug', v: 3, msg: 'HTTP' },
];

describe('jsonLogger', () => {
  it('writes one JSON line an entry, the time first under ts', () => {
    const c = capture();
    jsonLogger('debug', c.out)({ level: 'info', msg: 'hello', err: 'x' });
    const [entry] = c.entries();
    assert.deepEqual(Object.keys(entry), ['ts', 'level', 'msg', 'err']);
    assert.ok(!Number.isNaN(Date.parse(entry.ts as string)));
  });

  it('writes the entries at the level or above, and those with a v within the verbosity', () => {
    const written = (level: LogEntry['level'], verbosity?: number) => {
      const c = capture();
      const log = jsonLogger(level, c.out, verbosity);
      for (const e of entries) log(e);
      return c.entries().map((e) => e.msg);
    };
    assert.deepEqual(written('warn'), ['e', 'w']);
    assert.deepEqual(written('info', 2), ['e', 'w', 'i']);
    assert.deepEqual(written('info', 3), ['e', 'w', 'i', 'HTTP']);
    assert.deepEqual(written('debug'), ['e', 'w', 'i', 'd', 'HTTP']);
  });
});

describe('namedLogger', () => {
  it('names the logger, joining with a name the entry has, as logr’s WithName', () => {
    const c = capture();
    const log = namedLogger(jsonLogger('debug', c.out), 'apiserver');
    log({ level: 'info', msg: 'a' });
    log({ level: 'info', msg: 'b', logger: 'garbage-collector' });
    assert.deepEqual(
      c.entries().map((e) => e.logger),
      ['apiserver', 'apiserver.garbage-collector'],
    );
  });
});
