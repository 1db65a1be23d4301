import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bindAvailable, startBind } from './bind.ts';

const skip = bindAvailable() ? false : 'named and dig are not installed (Debian bind9, bind9-dnsutils)';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the BIND launcher', { skip }, () => {
  it('serves its zones on a loopback port, not as root, and stops cleanly', async () => {
    const bind = await startBind();
    let stopped = false;
    try {
      assert.match(bind.address, /^127\.0\.0\.1:\d+$/);
      assert.deepEqual(bind.zones, ['example.test', 'delegated.test']);
      assert.deepEqual(
        Object.values(bind.keys).map((key) => key.bindAlgorithm),
        ['hmac-md5', 'hmac-sha1', 'hmac-sha224', 'hmac-sha256', 'hmac-sha384', 'hmac-sha512'],
      );
      assert.deepEqual(await bind.dig('example.test', 'NS'), ['localhost.']);
      assert.deepEqual(await bind.dig('_acme-challenge.cname.example.test', 'CNAME'), [
        '_acme-challenge.cname.delegated.test.',
      ]);
      // Recursion is off: a name outside its zones is refused, as an authoritative-only server does.
      assert.deepEqual(await bind.dig('example.com', 'A'), []);
      if (process.getuid?.() === 0) {
        // Root starts it; it runs as the bind user (the second number on /proc/<pid>/status's Uid line is the effective uid).
        const uid = /^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${bind.pid}/status`, 'utf8'))?.[1];
        assert.notEqual(uid, '0');
      }
      assert.ok(existsSync(join(bind.dir, 'named.conf')));
      await bind.stop();
      stopped = true;
      assert.equal(alive(bind.pid), false);
      assert.equal(existsSync(bind.dir), false);
      // Stopping twice is harmless.
      await bind.stop();
    } finally {
      if (!stopped) await bind.stop();
    }
  });
});
