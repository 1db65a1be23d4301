import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readFileIfExists } from './files.ts';

describe('readFileIfExists', () => {
  it('reads an existing file, is undefined for a missing one, and throws any other error', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'certkit-files-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'present'), 'text\n');
    await mkdir(join(dir, 'a-directory'));

    assert.equal(await readFileIfExists(join(dir, 'present')), 'text\n');
    assert.equal(await readFileIfExists(join(dir, 'missing')), undefined);
    // A key that is there but cannot be read must not pass for missing, or it would be replaced.
    await assert.rejects(readFileIfExists(join(dir, 'a-directory')), { code: 'EISDIR' });
  });
});
