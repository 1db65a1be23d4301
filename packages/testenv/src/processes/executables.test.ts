import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findExecutable, firstExecutable } from './executables.ts';

describe('finding the tools tests drive', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certkit-executables-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const tool = join(dir, 'tool');
  const plain = join(dir, 'plain');
  writeFileSync(tool, '#!/bin/sh\n');
  chmodSync(tool, 0o755);
  writeFileSync(plain, 'not executable');
  chmodSync(plain, 0o644);

  it('takes the first executable path, passing over missing and non-executable ones', () => {
    assert.equal(firstExecutable([join(dir, 'missing'), plain, tool]), tool);
    assert.equal(firstExecutable([join(dir, 'missing')]), undefined);
  });

  it('looks in the given directories before $PATH, and says undefined when nothing is found', () => {
    assert.equal(findExecutable('tool', [dir]), tool);
    assert.equal(findExecutable('plain', [dir]), undefined);
    assert.ok(findExecutable('sh')?.endsWith('/sh'));
    assert.equal(findExecutable('certkit-no-such-tool'), undefined);
  });
});
