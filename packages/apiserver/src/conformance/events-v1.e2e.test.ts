import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiException, CoreV1Api, EventsV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { type PythonClient, pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * events.k8s.io/v1 Events, served as kube-apiserver serves them: the core/v1 Events in the newer form (note,
 * regarding, reportingController, deprecated*), one stored set written and read through either API, with the
 * field selectors, discovery, OpenAPI and validation of that API. Checked through kubectl, client-node and
 * the Python client (client-go's new events API writes what the Python script below writes).
 */

const skip = kubectlSkip || pythonClientSkip;
if (skip) console.log(`# skipping the events.k8s.io suite: ${skip}`);

let t: TestServer;
let core: CoreV1Api;
let eventsApi: EventsV1Api;
let kc: KubeConfig;
let workDir: string;
let kubectl: Kubectl;
let py: PythonClient;
const ns = 'events-v1';

before(async () => {
  if (skip) return;
  t = await startTestServer();
  kc = new KubeConfig();
  kc.loadFromFile(t.kubeconfigPath);
  core = kc.makeApiClient(CoreV1Api);
  eventsApi = kc.makeApiClient(EventsV1Api);
  workDir = await mkdtemp(join(tmpdir(), 'certkit-events-v1-'));
  kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
    workDir,
  );
  py = pythonClientFor(t.kubeconfigPath);
  await core.createNamespace({ body: { metadata: { name: ns } } });
});
after(async () => {
  await t?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** An Event as client-go's events.k8s.io recorder (k8s.io/client-go/tools/events) first writes it. */
function newStyleEvent(name: string, regardingName: string) {
  return {
    metadata: { name, namespace: ns },
    eventTime: new Date('2026-01-02T03:04:05.123456Z'),
    reportingController: 'example.com/widget-controller',
    reportingInstance: 'widget-controller-7d4f',
    action: 'Reconcile',
    reason: 'Synced',
    regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: regardingName, namespace: ns, uid: 'u-1' },
    note: 'synced the widget',
    type: 'Normal',
  };
}

describe('events.k8s.io/v1 Events', { skip }, () => {
  it('is discovered with kube-apiserver names and described in OpenAPI', async () => {
    const resources = await kubectl.ok('api-resources', '--api-group=events.k8s.io', '--no-headers');
    assert.match(resources, /^events\s+ev\s+events\.k8s\.io\/v1\s+true\s+Event$/m);
    const explain = await kubectl.ok('explain', 'events.regarding', '--api-version=events.k8s.io/v1');
    assert.match(explain, /GROUP:\s+events\.k8s\.io/);
    assert.match(explain, /FIELD: regarding <ObjectReference>/);
    const note = await kubectl.ok('explain', 'events.note', '--api-version=events.k8s.io/v1');
    assert.match(note, /FIELD: note <string>/);
  });

  it('an Event written through events.k8s.io reads through core/v1 with the mapped fields, and back', async () => {
    const created = await eventsApi.createNamespacedEvent({
      namespace: ns,
      body: newStyleEvent('new-style', 'cm-a'),
    });
    assert.equal(created.apiVersion, 'events.k8s.io/v1');
    assert.equal(created.note, 'synced the widget');
    const asCore = await core.readNamespacedEvent({ name: 'new-style', namespace: ns });
    assert.equal(asCore.apiVersion, 'v1');
    assert.equal(asCore.message, 'synced the widget');
    assert.equal(asCore.involvedObject.name, 'cm-a');
    assert.equal(asCore.reportingComponent, 'example.com/widget-controller');
    assert.equal(asCore.reportingInstance, 'widget-controller-7d4f');
    assert.equal(asCore.action, 'Reconcile');
    assert.equal(asCore.metadata.resourceVersion, created.metadata!.resourceVersion);

    // The other way: what client-go's core/v1 EventRecorder writes, read as events.k8s.io/v1.
    const old = await t.fetch('POST', `/api/v1/namespaces/${ns}/events`, {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'old-style', namespace: ns },
        involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-b', namespace: ns },
        reason: 'Failed',
        message: 'could not sync',
        type: 'Warning',
        source: { component: 'cert-manager-certificates-issuing' },
        reportingComponent: 'cert-manager-certificates-issuing',
        firstTimestamp: '2026-01-02T03:00:00Z',
        lastTimestamp: '2026-01-02T03:05:00Z',
        count: 3,
      },
    });
    assert.equal(old.status, 201, old.text);
    const raw = await t.fetch('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events/old-style`);
    assert.equal(raw.status, 200, raw.text);
    const { metadata, ...rest } = raw.json;
    assert.equal(metadata.name, 'old-style');
    assert.deepEqual(rest, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // Go writes its zero times as null and empty structs as {}: as kube-apiserver serves these.
      eventTime: null,
      reportingController: 'cert-manager-certificates-issuing',
      reason: 'Failed',
      regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-b', namespace: ns },
      note: 'could not sync',
      type: 'Warning',
      deprecatedSource: { component: 'cert-manager-certificates-issuing' },
      deprecatedFirstTimestamp: '2026-01-02T03:00:00Z',
      deprecatedLastTimestamp: '2026-01-02T03:05:00Z',
      deprecatedCount: 3,
    });
  });

  it('a series is patched as client-go does, and lists select by this API’s field names', async () => {
    const out = await py.run(
      `
ns = ARGS
ev = client.EventsV1Api()
body = {'metadata': {'name': 'series', 'namespace': ns}, 'eventTime': '2026-01-02T03:04:05.000001Z',
        'reportingController': 'example.com/py', 'reportingInstance': 'py-1', 'action': 'Probe',
        'reason': 'Unhealthy', 'regarding': {'kind': 'ConfigMap', 'name': 'cm-series', 'namespace': ns},
        'note': 'probe failed', 'type': 'Warning'}
ev.create_namespaced_event(ns, body)
# client-go's events.k8s.io recorder folds a repeat into the series with a strategic merge patch.
patched = ev.patch_namespaced_event('series', ns,
    {'series': {'count': 2, 'lastObservedTime': '2026-01-02T03:05:05.000002Z'}})
as_core = core.read_namespaced_event('series', ns)
by_regarding = ev.list_namespaced_event(ns, field_selector='regarding.name=cm-series')
by_controller = ev.list_namespaced_event(ns, field_selector='reportingController=example.com/py,type=Warning')
core_by_involved = core.list_namespaced_event(ns, field_selector='involvedObject.name=cm-series')
refused = api_error(lambda: ev.list_namespaced_event(ns, field_selector='involvedObject.name=cm-series'))
emit({'series': to_dict(patched.series), 'core_series': to_dict(as_core.series),
      'by_regarding': [e.metadata.name for e in by_regarding.items],
      'by_controller': [e.metadata.name for e in by_controller.items],
      'core_by_involved': [e.metadata.name for e in core_by_involved.items], 'refused': refused})
`,
      ns,
    );
    // (Python's datetime, as the client hands it back.)
    assert.deepEqual(out.series, { count: 2, lastObservedTime: '2026-01-02T03:05:05.000002+00:00' });
    assert.deepEqual(out.core_series, out.series);
    assert.deepEqual(out.by_regarding, ['series']);
    assert.deepEqual(out.by_controller, ['series']);
    assert.deepEqual(out.core_by_involved, ['series']);
    assert.equal(out.refused.status, 400);
    assert.equal(out.refused.body.message, 'field label not supported: involvedObject.name');
  });

  it('holds creates and updates through events.k8s.io to kube-apiserver’s strict validation', async () => {
    try {
      await eventsApi.createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { name: 'strict', namespace: ns },
          regarding: { kind: 'ConfigMap', name: 'x', namespace: ns },
          deprecatedCount: 2,
          type: 'Info',
        } as never,
      });
      assert.fail('the create succeeded');
    } catch (err) {
      assert.ok(err instanceof ApiException, String(err));
      assert.equal(err.code, 422);
      const status = JSON.parse(err.body as string) as { message: string; details: { kind: string } };
      assert.equal(
        status.message,
        'Event.events.k8s.io "strict" is invalid: [eventTime: Required value, type: Invalid value: "": has invalid value: Info, count: Invalid value: "": needs to be unset]',
      );
    }
    // The note of an Event is its own: an update may add to the series, never rewrite what happened.
    const out = await kubectl.run(
      'patch',
      'events.v1.events.k8s.io',
      'new-style',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"note":"rewritten"}',
    );
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /message: Invalid value: "rewritten": field is immutable/);
    // The same update through core/v1 is allowed, as kube-apiserver keeps core's legacy validation.
    await kubectl.ok(
      'patch',
      'event',
      'new-style',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"message":"rewritten"}',
    );
  });

  it('kubectl lists them as a Table, and a watch sees core/v1 writes in events.k8s.io form', async () => {
    const table = await kubectl.ok('get', 'events.events.k8s.io', '-n', ns);
    assert.match(table.split('\n')[0], /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.match(table, /Warning\s+Failed\s+configmap\/cm-b\s+could not sync/);
    const seen: { event: string; note?: string; regarding?: { name?: string } }[] = [];
    const list = await eventsApi.listNamespacedEvent({ namespace: ns });
    const watching = await new Watch(kc).watch(
      `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      { resourceVersion: list.metadata!.resourceVersion },
      (event, obj: { note?: string; regarding?: { name?: string } }) => seen.push({ event, ...obj }),
      () => {},
    );
    try {
      await core.createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { name: 'watched', namespace: ns },
          involvedObject: { kind: 'ConfigMap', name: 'cm-w', namespace: ns },
          reason: 'Seen',
          message: 'seen through the watch',
          type: 'Normal',
        },
      });
      for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(seen.length, 1);
      assert.equal(seen[0].event, 'ADDED');
      assert.equal(seen[0].note, 'seen through the watch');
      assert.equal(seen[0].regarding?.name, 'cm-w');
    } finally {
      watching.abort();
    }
  });
});
