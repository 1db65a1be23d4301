import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadTokenFile } from './token-file.ts';

/** kube-apiserver's --token-auth-file format, read as its tokenfile package reads it. */

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certkit-tokens-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(text: string) {
  const path = join(dir, `tokens-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(path, text);
  const warnings: string[] = [];
  return { tokens: await loadTokenFile(path, (w) => warnings.push(w)), warnings, path };
}

describe('loadTokenFile', () => {
  it('reads token, user, uid and the quoted group list', async () => {
    const { tokens } = await load(
      'tok-1,alice,1001,"dev,ops"\r\n\ntok-2,bob,1002\ntok-3,"carol, the admin",1003,system:masters\n',
    );
    assert.deepEqual(Object.fromEntries(tokens), {
      'tok-1': { name: 'alice', uid: '1001', groups: ['dev', 'ops'] },
      'tok-2': { name: 'bob', uid: '1002', groups: [] },
      'tok-3': { name: 'carol, the admin', uid: '1003', groups: ['system:masters'] },
    });
  });
  it('skips an empty token and keeps the last record of a duplicate one, with warnings', async () => {
    const { tokens, warnings } = await load(',nobody,0\ntok,first,1\ntok,second,2\n');
    assert.deepEqual([...tokens.keys()], ['tok']);
    assert.equal(tokens.get('tok')?.name, 'second');
    assert.equal(warnings.length, 2);
    assert.match(warnings[0], /empty token .* record number '1'/);
    assert.match(warnings[1], /duplicate token .* record number '3'/);
  });
  it('refuses a record of fewer than three columns, and malformed CSV', async () => {
    await assert.rejects(
      load('tok,alice\n'),
      /must have at least 3 columns \(token, user name, user uid\), found 2/,
    );
    await assert.rejects(load('tok,al"ice,1\n'), /token file '.*':/);
  });
});
