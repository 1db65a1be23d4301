import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { type Cluster, startCluster } from '@certkit/testenv/apiserver/cluster';
import { MEMORY_PROBE_SCRIPT } from '@certkit/testenv/processes/scripts';

/**
 * Memory is the product: a metadata-only informer over 300 Secrets of 1 MiB each must grow the heap by
 * less than 5 MB (docs/adr/0010's scenario). The informer runs in a child process started with --expose-gc,
 * so that the API server (which caches every Secret in full) is not part of the measurement.
 */

const SECRETS = 300;
const SECRET_BYTES = 1024 * 1024 - 64;
const NS = 'memory';
const probe = MEMORY_PROBE_SCRIPT;

interface Measurement {
  mode: string;
  objects: number;
  heapGrowthBytes: number;
  syncMs: number;
}

async function measure(kubeconfig: string, mode: 'full' | 'metadata'): Promise<Measurement> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=4096', probe, kubeconfig, mode],
    { maxBuffer: 1 << 20, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Measurement;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

describe('informer memory', () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await startCluster();
    await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const secrets = await cluster.client.forKind('v1', 'Secret');
    // Distinct contents per Secret, so nothing downstream can share one string between them.
    const payload = Buffer.alloc(SECRET_BYTES, 7);
    const create = async (i: number) => {
      payload.writeUInt32BE(i, 0);
      const data = { blob: payload.toString('base64') };
      await secrets.create(NS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `big-${i}` }, data });
    };
    for (let i = 0; i < SECRETS; i += 10) {
      await Promise.all(Array.from({ length: Math.min(10, SECRETS - i) }, (_, j) => create(i + j)));
    }
  });

  after(async () => {
    await cluster?.close();
  });

  it(`a metadata-only informer over ${SECRETS} Secrets of 1 MiB grows the heap by less than 5 MB`, async (t) => {
    const metadata = await measure(cluster.server.kubeconfigPath, 'metadata');
    t.diagnostic(
      `metadata informer: ${metadata.objects} objects, heap +${mb(metadata.heapGrowthBytes)}, sync ${metadata.syncMs} ms`,
    );
    assert.equal(metadata.objects, SECRETS);
    assert.ok(metadata.heapGrowthBytes < 5 * 1024 * 1024, `heap grew by ${mb(metadata.heapGrowthBytes)}`);

    const full = await measure(cluster.server.kubeconfigPath, 'full');
    t.diagnostic(
      `full informer (for comparison): ${full.objects} objects, heap +${mb(full.heapGrowthBytes)}, sync ${full.syncMs} ms`,
    );
    assert.equal(full.objects, SECRETS);
    assert.ok(
      full.heapGrowthBytes > 50 * metadata.heapGrowthBytes,
      'the full figure dwarfs the metadata one',
    );
  });
});
