import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parsePrometheus } from '@certkit/testenv/metrics/prometheus-text';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t.close();
});

async function samples(): Promise<Map<string, number>> {
  const res = await t.fetch('GET', '/metrics');
  assert.equal(res.status, 200);
  return parsePrometheus(res.text);
}

describe("/metrics: the SQLite store's group commits", () => {
  it('counts a write as one more write in one more group, and the time its commit took', async () => {
    const beforeWrite = await samples();
    const created = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'counted' }, data: { a: '1' } },
    });
    assert.equal(created.status, 201, created.text);
    const afterWrite = await samples();
    const grew = (name: string) => afterWrite.get(name)! - beforeWrite.get(name)!;
    // The server's own controllers may write in the same moment: at least this write, in at least one group.
    assert.ok(grew('certkit_storage_commit_writes_total') >= 1);
    assert.ok(grew('certkit_storage_commit_groups_total') >= 1);
    assert.ok(grew('certkit_storage_commit_seconds_total') > 0);
    assert.ok(
      afterWrite.get('certkit_storage_commit_writes_total')! >=
        afterWrite.get('certkit_storage_commit_groups_total')!,
    );
  });
});
