import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { onPath } from './on-path.ts';

describe('onPath', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certkit-on-path-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('finds an executable file in any PATH directory, and not a file that cannot be run', () => {
    writeFileSync(join(dir, 'tool'), '#!/bin/sh\n');
    chmodSync(join(dir, 'tool'), 0o755);
    writeFileSync(join(dir, 'plain'), '');
    chmodSync(join(dir, 'plain'), 0o644);
    assert.equal(onPath('tool', ['/nonexistent', dir].join(delimiter)), true);
    assert.equal(onPath('tool', '/nonexistent'), false);
    assert.equal(onPath('tool', ''), false);
    assert.equal(onPath('plain', dir), false, 'no execute bit: not even root may run it');
  });
});
