import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { stringify as stringifyYaml } from 'yaml';
import { bulkCrd } from '@certkit/testenv/apiserver/bulk-crd';
import { kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * Server-side apply of large objects stays linear: a ConfigMap with 20,000 data keys took 20 s to apply
 * (everything else waiting meanwhile) because field sets and the YAML decoder were quadratic. Costs are
 * compared as ratios between 2,000 and 20,000 members, linear being ~10 and quadratic ~100, with a bound of
 * 30. The cost is this process's CPU time over the request (client and server both run here), which other
 * processes on a busy machine disturb far less than wall time.
 */

const SMALL = 2_000;
const LARGE = 20_000;
const MAX_RATIO = 30;
const NS = 'default';
const APPLY = 'application/apply-patch+yaml';

let t: TestServer;
let serial = 0;

function configMap(name: string, n: number, value: (i: number) => string) {
  const data: Record<string, string> = {};
  for (let i = 0; i < n; i++) data[`key-${i}`] = value(i);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

function bulk(name: string, n: number, value: (i: number) => string) {
  return {
    apiVersion: 'scale.example.com/v1',
    kind: 'Bulk',
    metadata: { name },
    spec: {
      entries: Array.from({ length: n }, (_, i) => ({ name: `entry-${i}`, value: value(i) })),
      tags: Array.from({ length: n }, (_, i) => `tag-${i}`),
    },
  };
}

const configMaps = `/api/v1/namespaces/${NS}/configmaps`;
const bulks = `/apis/scale.example.com/v1/namespaces/${NS}/bulks`;

async function send(method: string, path: string, body: string, contentType: string, status: number[]) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const res = await t.fetch(method, path, { rawBody: body, headers: { 'Content-Type': contentType } });
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  assert.ok(status.includes(res.status), `${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return { ms, cpuMs: (used.user + used.system) / 1000, res };
}

const apply = (path: string, body: unknown, manager = 'scale-test') =>
  send(
    'PATCH',
    `${path}?fieldManager=${manager}`,
    typeof body === 'string' ? body : JSON.stringify(body),
    APPLY,
    [200, 201],
  );

/** The cheapest of three runs of `op` (returning CPU ms) at each size, sizes interleaved. */
async function assertLinear(
  context: TestContext,
  what: string,
  op: (n: number, id: string) => Promise<number>,
) {
  await op(50, `warm${serial++}`);
  let small = Infinity;
  let large = Infinity;
  for (let run = 0; run < 3; run++) {
    small = Math.min(small, await op(SMALL, `s${serial++}`));
    large = Math.min(large, await op(LARGE, `s${serial++}`));
  }
  const ratio = large / small;
  context.diagnostic(`${what}: ${large.toFixed(0)} / ${small.toFixed(0)} CPU ms, ratio ${ratio.toFixed(1)}`);
  assert.ok(
    ratio < MAX_RATIO,
    `${what}: ${LARGE} members took ${large.toFixed(0)} CPU ms, ${SMALL} took ${small.toFixed(0)}: ratio ${ratio.toFixed(1)} (linear ~10)`,
  );
}

describe('server-side apply at scale', () => {
  before(async () => {
    t = await startTestServer();
    const crd = bulkCrd('scale.example.com');

    const res = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd,
    });
    assert.equal(res.status, 201, res.text);
    for (let i = 0; (await t.fetch('GET', bulks)).status !== 200; i++) {
      assert.ok(i < 500, 'the custom resource is never served');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  after(async () => {
    await t?.close();
  });

  it('applies a ConfigMap with 20,000 keys for the first time in linear time, JSON and YAML bodies', async (context) => {
    await assertLinear(context, 'first apply', async (n, id) => {
      const { cpuMs, res } = await apply(
        `${configMaps}/first-${id}`,
        configMap(`first-${id}`, n, (i) => `v${i}`),
      );
      assert.equal(Object.keys(res.json.data).length, n);
      assert.equal(Object.keys(res.json.metadata.managedFields[0].fieldsV1['f:data']).length, n);
      return cpuMs;
    });
    await assertLinear(context, 'first apply of a YAML body', async (n, id) => {
      const body = stringifyYaml(configMap(`yaml-${id}`, n, (i) => `v${i}`));
      const { cpuMs, res } = await apply(`${configMaps}/yaml-${id}`, body);
      assert.equal(res.json.data[`key-${n - 1}`], `v${n - 1}`);
      return cpuMs;
    });
  });

  it('applies again, and moves ownership to another manager, in linear time', async (context) => {
    await assertLinear(context, 'second apply', async (n, id) => {
      await apply(
        `${configMaps}/again-${id}`,
        configMap(`again-${id}`, n, (i) => `v${i}`),
      );
      const { cpuMs, res } = await apply(
        `${configMaps}/again-${id}`,
        configMap(`again-${id}`, n, (i) => (i === 0 ? 'changed' : `v${i}`)),
      );
      assert.equal(res.json.data['key-0'], 'changed');
      return cpuMs;
    });
    await assertLinear(context, 'update by another manager', async (n, id) => {
      await apply(
        `${configMaps}/moved-${id}`,
        configMap(`moved-${id}`, n, (i) => `v${i}`),
      );
      const { cpuMs, res } = await send(
        'PATCH',
        `${configMaps}/moved-${id}?fieldManager=other`,
        JSON.stringify({ data: configMap('', n, (i) => `other-${i}`).data }),
        'application/merge-patch+json',
        [200],
      );
      const fields = res.json.metadata.managedFields;
      assert.deepEqual(
        fields.map((f: { manager: string }) => f.manager),
        ['other'],
        'every key moved to the other manager',
      );
      return cpuMs;
    });
  });

  it('applies a custom resource with a list-map and a set of 20,000 items in linear time', async (context) => {
    await assertLinear(context, 'list-map first and second apply', async (n, id) => {
      const first = await apply(
        `${bulks}/b-${id}`,
        bulk(`b-${id}`, n, (i) => `v${i}`),
      );
      const second = await apply(
        `${bulks}/b-${id}`,
        bulk(`b-${id}`, n, (i) => (i === n - 1 ? 'changed' : `v${i}`)),
      );
      assert.equal(second.res.json.spec.entries.length, n);
      assert.equal(second.res.json.spec.entries[n - 1].value, 'changed');
      return first.cpuMs + second.cpuMs;
    });
    await assertLinear(context, 'list-map shrunk to nothing', async (n, id) => {
      await apply(
        `${bulks}/s-${id}`,
        bulk(`s-${id}`, n, (i) => `v${i}`),
      );
      const { cpuMs, res } = await apply(`${bulks}/s-${id}`, {
        apiVersion: 'scale.example.com/v1',
        kind: 'Bulk',
        metadata: { name: `s-${id}` },
        spec: { entries: [{ name: 'entry-0' }] },
      });
      assert.deepEqual(
        res.json.spec,
        { entries: [{ name: 'entry-0' }] },
        'items applied before and not now go',
      );
      return cpuMs;
    });
  });

  it('answers a conflict on 20,000 fields with a bounded 409 that counts them all', async () => {
    const name = 'conflicted';
    await apply(
      `${configMaps}/${name}`,
      configMap(name, LARGE, (i) => `v${i}`),
      'first',
    );
    const { res } = await send(
      'PATCH',
      `${configMaps}/${name}?fieldManager=second`,
      JSON.stringify(configMap(name, LARGE, (i) => `w${i}`)),
      APPLY,
      [409],
    );
    assert.ok(res.text.length < 64 * 1024, `409 of ${res.text.length} bytes`);
    assert.equal(res.json.reason, 'Conflict');
    assert.match(
      res.json.message,
      /^Apply failed with 20000 conflicts: conflicts with "first":\n- \.data\.key-0\n/,
    );
    assert.match(res.json.message, /\nand 19900 more conflicts, not listed$/);
    assert.equal(res.json.details.causes.length, 100);
    assert.deepEqual(res.json.details.causes[0], {
      reason: 'FieldManagerConflict',
      message: 'conflict with "first"',
      field: '.data.key-0',
    });
  });

  it('refuses a duplicate key at the end of a 20,000-key body, naming its line', async () => {
    const yaml = `${stringifyYaml(configMap('dup', LARGE, (i) => `v${i}`))}  key-7: again\n`;
    const line = yaml.split('\n').length - 1;
    const fromYaml = await send('PATCH', `${configMaps}/dup?fieldManager=m`, yaml, APPLY, [400]);
    assert.match(fromYaml.res.json.message, new RegExp(`Map keys must be unique at line ${line}, column 3`));
    const json = JSON.stringify(configMap('dup', LARGE, (i) => `v${i}`)).replace(/}}$/, ',"key-7":"again"}}');
    const fromJson = await send('PATCH', `${configMaps}/dup?fieldManager=m`, json, APPLY, [400]);
    assert.match(
      fromJson.res.json.message,
      /^error decoding YAML: Map keys must be unique at line 1, column \d+/,
    );
    assert.match(fromJson.res.json.message, /key "key-7" already set in map/);
    // Below the timing of the linear tests above, and far below the quadratic check's seconds.
    assert.ok(fromYaml.ms < 5_000 && fromJson.ms < 5_000, `${fromYaml.ms} ms, ${fromJson.ms} ms`);
  });

  it(
    'serves kubectl apply --server-side of a 20,000-key ConfigMap, a changed one and a conflicting one',
    {
      skip: kubectlSkip,
    },
    async () => {
      const workDir = await mkdtemp(join(tmpdir(), 'certkit-apply-scale-'));
      try {
        const env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
        const { run, ok, manifest } = kubectlFor(env, workDir);
        const yaml = (value: (i: number) => string) =>
          stringifyYaml({
            ...configMap('kubectl-big', LARGE, value),
            metadata: { name: 'kubectl-big', namespace: NS },
          });
        assert.match(
          await ok('apply', '--server-side', '-f', await manifest(yaml((i) => `v${i}`))),
          /serverside-applied/,
        );
        const changed = await manifest(yaml((i) => (i === 1 ? 'changed' : `v${i}`)));
        assert.match(await ok('apply', '--server-side', '-f', changed), /serverside-applied/);
        const stored = await t.fetch('GET', `${configMaps}/kubectl-big`);
        assert.equal(stored.json.data['key-1'], 'changed');
        const [entry] = stored.json.metadata.managedFields;
        assert.equal(`${entry.manager}/${entry.operation}`, 'kubectl/Apply');
        assert.equal(Object.keys(entry.fieldsV1['f:data']).length, LARGE);

        const other = await manifest(yaml((i) => `other-${i}`));
        const refused = await run('apply', '--server-side', '--field-manager=intruder', '-f', other);
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /Apply failed with 20000 conflicts: conflicts with "kubectl":/);
        assert.match(refused.stderr, /and 19900 more conflicts, not listed/);
        assert.ok(refused.stderr.length < 64 * 1024, `kubectl printed ${refused.stderr.length} bytes`);
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
    },
  );

  it('answers /healthz during and right after a 20,000-key apply', async () => {
    const body = JSON.stringify(configMap('live', LARGE, (i) => `v${i}`));
    const applying = apply(`${configMaps}/live`, body);
    // Sent while the apply's body is still on its way or being applied.
    const health = (async () => {
      const started = performance.now();
      const res = await t.fetch('GET', '/healthz');
      return { status: res.status, ms: performance.now() - started };
    })();
    const [applied, during] = await Promise.all([applying, health]);
    assert.equal(during.status, 200);
    // The quadratic apply held the server for 9 to 20 s; a linear one for well under a second.
    assert.ok(
      during.ms < 5_000,
      `/healthz waited ${during.ms.toFixed(0)} ms (the apply took ${applied.ms.toFixed(0)})`,
    );
    const afterwards = await t.fetch('GET', `${configMaps}/live`);
    assert.equal(afterwards.status, 200);
    assert.equal(Object.keys(afterwards.json.data).length, LARGE);
  });
});
