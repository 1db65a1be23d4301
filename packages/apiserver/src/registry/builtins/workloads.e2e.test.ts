import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { tableRecords } from '@certkit/testenv/kubectl/table';

/**
 * Pods, Deployments (with scale), Ingresses, IngressClasses and APIServices driven by kubectl as on a cluster
 * without kubelet, scheduler or controller manager: defaults, printer columns, 422s naming the field.
 */

const skip = kubectlSkip;
let t: TestServer;
let workDir: string;
let kubectl: Kubectl;
const NS = 'apps';

async function apply(yaml: string): Promise<string> {
  return kubectl.ok('apply', '-f', await kubectl.manifest(yaml));
}

async function getJson(resource: string, name: string, namespaced = true): Promise<any> {
  return JSON.parse(await kubectl.ok('get', resource, name, ...(namespaced ? ['-n', NS] : []), '-o', 'json'));
}

/** Posts a body and asserts the 422 names the field. */
async function refused(path: string, body: unknown, field: string, message?: RegExp): Promise<void> {
  const r = await t.fetch('POST', path, { body });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.reason, 'Invalid');
  assert.ok(
    r.json.details.causes.some((c: { field: string }) => c.field === field),
    `no cause names ${field}: ${r.text}`,
  );
  if (message) assert.match(r.json.message, message);
}

describe('Pods, Deployments, Ingresses and APIServices through kubectl', { skip }, () => {
  before(async () => {
    t = await startTestServer();
    workDir = await mkdtemp(join(tmpdir(), 'certkit-workloads-'));
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
      workDir,
    );
    await kubectl.ok('create', 'namespace', NS);
  });
  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  describe('Pods', () => {
    it('kubectl run makes a Pending Pod with kube-apiserver defaults and QoS class', async () => {
      await kubectl.ok('run', 'nginx', '-n', NS, '--image=nginx:1.27', '--port=80');
      const pod = await getJson('pod', 'nginx');
      assert.deepEqual(pod.status, { phase: 'Pending', qosClass: 'BestEffort' });
      assert.equal(pod.spec.restartPolicy, 'Always');
      assert.equal(pod.spec.dnsPolicy, 'ClusterFirst');
      assert.equal(pod.spec.terminationGracePeriodSeconds, 30);
      assert.equal(pod.spec.schedulerName, 'default-scheduler');
      assert.equal(pod.spec.serviceAccountName, 'default');
      assert.equal(pod.spec.enableServiceLinks, true);
      assert.deepEqual(
        pod.spec.tolerations.map((t: { key: string }) => t.key),
        ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'],
      );
      const [c] = pod.spec.containers;
      assert.equal(c.imagePullPolicy, 'IfNotPresent');
      assert.equal(c.terminationMessagePath, '/dev/termination-log');
      assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }]);

      const [row] = tableRecords(await kubectl.ok('get', 'po', 'nginx', '-n', NS, '-o', 'wide'));
      assert.deepEqual(
        { ...row, AGE: undefined },
        {
          NAME: 'nginx',
          READY: '0/1',
          STATUS: 'Pending',
          RESTARTS: '0',
          AGE: undefined,
          IP: '<none>',
          NODE: '<none>',
          'NOMINATED NODE': '<none>',
          'READINESS GATES': '<none>',
        },
      );
      const described = await kubectl.ok('describe', 'pod', 'nginx', '-n', NS);
      assert.match(described, /Status:\s+Pending/);
      assert.match(described, /QoS Class:\s+BestEffort/);
    });

    it('computes Guaranteed and Burstable, and keeps status behind its subresource', async () => {
      await apply(`apiVersion: v1
kind: Pod
metadata: {name: guaranteed, namespace: ${NS}}
spec:
  containers:
  - name: app
    image: registry.example/app
    resources: {limits: {cpu: 500m, memory: 128Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: burstable, namespace: ${NS}}
spec:
  containers:
  - {name: app, image: app:latest, resources: {requests: {cpu: 100m}}}
`);
      const guaranteed = await getJson('pod', 'guaranteed');
      assert.equal(guaranteed.status.qosClass, 'Guaranteed');
      // Limits without requests request what they limit; an untagged image is pulled Always.
      assert.deepEqual(guaranteed.spec.containers[0].resources.requests, { cpu: '500m', memory: '128Mi' });
      assert.equal(guaranteed.spec.containers[0].imagePullPolicy, 'Always');
      const burstable = await getJson('pod', 'burstable');
      assert.equal(burstable.status.qosClass, 'Burstable');

      // A test plays the kubelet through the status subresource.
      const path = `/api/v1/namespaces/${NS}/pods/burstable`;
      const ignored = await t.fetch('PATCH', path, {
        body: { status: { phase: 'Running' } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(ignored.json.status.phase, 'Pending');
      const running = await t.fetch('PATCH', `${path}/status`, {
        body: {
          status: {
            phase: 'Running',
            podIP: '10.244.1.9',
            containerStatuses: [
              { name: 'app', ready: true, restartCount: 2, image: 'app:latest', imageID: '' },
            ],
          },
        },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(running.status, 200, running.text);
      const [row] = tableRecords(await kubectl.ok('get', 'pods', 'burstable', '-n', NS, '-o', 'wide'));
      assert.deepEqual([row.READY, row.STATUS, row.RESTARTS, row.IP], ['1/1', 'Running', '2', '10.244.1.9']);
      const selected = await kubectl.ok(
        'get',
        'pods',
        '-n',
        NS,
        '--field-selector=status.phase=Running',
        '-o',
        'name',
      );
      assert.equal(selected.trim(), 'pod/burstable');
    });

    it('refuses bad Pods and spec changes beyond images with 422', async () => {
      const pods = `/api/v1/namespaces/${NS}/pods`;
      await refused(
        pods,
        { metadata: { name: 'x' }, spec: {} },
        'spec.containers',
        /spec\.containers: Required value/,
      );
      await refused(
        pods,
        { metadata: { name: 'x' }, spec: { containers: [{ name: 'a' }] } },
        'spec.containers[0].image',
      );
      await refused(
        pods,
        {
          metadata: { name: 'x' },
          spec: {
            containers: [
              { name: 'a', image: 'a' },
              { name: 'a', image: 'b' },
            ],
          },
        },
        'spec.containers[1].name',
        /Duplicate value: "a"/,
      );
      await refused(
        pods,
        {
          metadata: { name: 'x' },
          spec: { restartPolicy: 'Sometimes', containers: [{ name: 'a', image: 'a' }] },
        },
        'spec.restartPolicy',
        /supported values: "Always", "Never", "OnFailure"/,
      );
      await refused(
        pods,
        {
          metadata: { name: 'x' },
          spec: {
            containers: [
              { name: 'a', image: 'a', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } },
            ],
          },
        },
        'spec.containers[0].resources.requests',
        /must be less than or equal to cpu limit of 1/,
      );
      const image = await kubectl.run('set', 'image', 'pod/nginx', '-n', NS, 'nginx=nginx:1.28');
      assert.equal(image.code, 0, image.stderr);
      const port = await kubectl.run(
        'patch',
        'pod',
        'nginx',
        '-n',
        NS,
        '-p',
        '{"spec":{"containers":[{"name":"nginx","ports":[{"containerPort":8080}]}]}}',
      );
      assert.equal(port.code, 1);
      assert.match(
        port.stderr,
        /spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`/,
      );
    });
  });

  describe('Deployments', () => {
    it('defaults, prints and scales a Deployment with kubectl', async () => {
      await apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${NS}, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
`);
      const deploy = await getJson('deployment', 'web');
      assert.equal(deploy.metadata.generation, 1);
      assert.deepEqual(deploy.spec.strategy, {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
      });
      assert.equal(deploy.spec.revisionHistoryLimit, 10);
      assert.equal(deploy.spec.progressDeadlineSeconds, 600);
      assert.equal(deploy.spec.template.spec.restartPolicy, 'Always');
      assert.deepEqual(deploy.status, {});
      const [row] = tableRecords(await kubectl.ok('get', 'deploy', 'web', '-n', NS, '-o', 'wide'));
      assert.deepEqual(
        { ...row, AGE: undefined },
        {
          NAME: 'web',
          READY: '0/2',
          'UP-TO-DATE': '0',
          AVAILABLE: '0',
          AGE: undefined,
          CONTAINERS: 'nginx',
          IMAGES: 'nginx:1.27',
          SELECTOR: 'app=web',
        },
      );

      assert.match(
        await kubectl.ok('scale', 'deployment', 'web', '-n', NS, '--replicas=5'),
        /deployment\.apps\/web scaled/,
      );
      const scaled = await getJson('deployment', 'web');
      assert.equal(scaled.spec.replicas, 5);
      assert.equal(scaled.metadata.generation, 2);
      const scale = await t.fetch('GET', `/apis/apps/v1/namespaces/${NS}/deployments/web/scale`);
      assert.deepEqual(
        {
          kind: scale.json.kind,
          apiVersion: scale.json.apiVersion,
          spec: scale.json.spec,
          status: scale.json.status,
        },
        {
          kind: 'Scale',
          apiVersion: 'autoscaling/v1',
          spec: { replicas: 5 },
          status: { replicas: 0, selector: 'app=web' },
        },
      );
      // kubectl checks --resource-version itself; the server's precondition is a Scale PUT's resourceVersion.
      const stale = await t.fetch('PUT', `/apis/apps/v1/namespaces/${NS}/deployments/web/scale`, {
        body: {
          kind: 'Scale',
          apiVersion: 'autoscaling/v1',
          metadata: { name: 'web', resourceVersion: '1' },
          spec: { replicas: 1 },
        },
      });
      assert.equal(stale.status, 409, stale.text);
      assert.match(stale.json.message, /the object has been modified/);
      const negative = await t.fetch('PUT', `/apis/apps/v1/namespaces/${NS}/deployments/web/scale`, {
        body: {
          kind: 'Scale',
          apiVersion: 'autoscaling/v1',
          metadata: { name: 'web' },
          spec: { replicas: -1 },
        },
      });
      assert.equal(negative.status, 422);
      assert.equal(negative.json.details.causes[0].field, 'spec.replicas');
    });

    it('kubectl create deployment, expose and create ingress work (their protobuf bodies)', async () => {
      await kubectl.ok(
        'create',
        'deployment',
        'api',
        '-n',
        NS,
        '--image=registry.example/api:2.1',
        '--replicas=0',
        '--port=8080',
      );
      const api = await getJson('deployment', 'api');
      // replicas 0 is a value, not an absent field.
      assert.equal(api.spec.replicas, 0);
      assert.deepEqual(api.spec.selector, { matchLabels: { app: 'api' } });
      assert.deepEqual(api.spec.template.spec.containers[0].ports, [
        { containerPort: 8080, protocol: 'TCP' },
      ]);
      await kubectl.ok('expose', 'deployment', 'api', '-n', NS, '--port=80', '--target-port=8080');
      const svc = await getJson('service', 'api');
      assert.deepEqual(svc.spec.selector, { app: 'api' });
      assert.deepEqual(svc.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 8080 }]);
      await kubectl.ok(
        'create',
        'ingress',
        'api',
        '-n',
        NS,
        '--class=nginx',
        '--rule=api.example.com/v1*=api:80',
      );
      const ingress = await getJson('ingress', 'api');
      assert.deepEqual(ingress.spec.rules, [
        {
          host: 'api.example.com',
          http: {
            paths: [
              {
                path: '/v1',
                pathType: 'Prefix',
                backend: { service: { name: 'api', port: { number: 80 } } },
              },
            ],
          },
        },
      ]);
    });

    it('refuses a selector that misses the template and a changed selector', async () => {
      const deployments = `/apis/apps/v1/namespaces/${NS}/deployments`;
      const template = {
        metadata: { labels: { app: 'api' } },
        spec: { containers: [{ name: 'a', image: 'a' }] },
      };
      await refused(
        deployments,
        { metadata: { name: 'x' }, spec: { selector: { matchLabels: { app: 'web' } }, template } },
        'spec.template.metadata.labels',
        /Invalid value: map\[string\]string\{"app":"api"\}: `selector` does not match template `labels`/,
      );
      await refused(deployments, { metadata: { name: 'x' }, spec: { template } }, 'spec.selector');
      await refused(
        deployments,
        {
          metadata: { name: 'x' },
          spec: {
            selector: { matchLabels: { app: 'api' } },
            template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } },
          },
        },
        'spec.template.spec.restartPolicy',
        /supported values: "Always"/,
      );
      const changed = await kubectl.run(
        'patch',
        'deployment',
        'web',
        '-n',
        NS,
        '-p',
        '{"spec":{"selector":{"matchLabels":{"app":"web","tier":"x"}},"template":{"metadata":{"labels":{"tier":"x"}}}}}',
      );
      assert.equal(changed.code, 1);
      assert.match(changed.stderr, /spec\.selector: Invalid value: .*: field is immutable/);
    });
  });

  describe('Ingresses and IngressClasses', () => {
    it('stores and prints them as kubectl does on a cluster', async () => {
      await apply(`apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: ${NS}}
spec:
  ingressClassName: nginx
  tls: [{hosts: [shop.example.com], secretName: shop-tls}]
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
  - host: api.example.com
    http:
      paths:
      - {path: /v1, pathType: Exact, backend: {service: {name: api, port: {name: http}}}}
`);
      const [cls] = tableRecords(await kubectl.ok('get', 'ingressclass'));
      assert.deepEqual(
        { ...cls, AGE: undefined },
        { NAME: 'nginx', CONTROLLER: 'k8s.io/ingress-nginx', PARAMETERS: '<none>', AGE: undefined },
      );
      const ingress = await getJson('ingress', 'shop');
      assert.equal(ingress.metadata.generation, 1);
      const [row] = tableRecords(await kubectl.ok('get', 'ing', 'shop', '-n', NS));
      assert.deepEqual(
        { ...row, AGE: undefined },
        {
          NAME: 'shop',
          CLASS: 'nginx',
          HOSTS: 'shop.example.com,api.example.com',
          ADDRESS: '',
          PORTS: '80, 443',
          AGE: undefined,
        },
      );
      const lb = await t.fetch('PATCH', `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses/shop/status`, {
        body: { status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(lb.status, 200, lb.text);
      const [after] = tableRecords(await kubectl.ok('get', 'ingress', 'shop', '-n', NS));
      assert.equal(after.ADDRESS, '203.0.113.10');
      const described = await kubectl.ok('describe', 'ingress', 'shop', '-n', NS);
      assert.match(described, /shop\.example\.com\s+\n?\s*\/\s+web:80/);
    });

    it('refuses bad Ingresses and IngressClasses with 422', async () => {
      const ingresses = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`;
      const backend = { service: { name: 'web', port: { number: 80 } } };
      await refused(
        ingresses,
        {
          metadata: { name: 'x' },
          spec: { rules: [{ host: 'a.example.com', http: { paths: [{ path: '/', backend }] } }] },
        },
        'spec.rules[0].http.paths[0].pathType',
        /pathType must be specified/,
      );
      await refused(
        ingresses,
        {
          metadata: { name: 'x' },
          spec: {
            rules: [{ host: '10.0.0.1', http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }],
          },
        },
        'spec.rules[0].host',
        /must be a DNS name, not an IP address/,
      );
      await refused(
        ingresses,
        {
          metadata: { name: 'x' },
          spec: { rules: [{ http: { paths: [{ path: 'api', pathType: 'Prefix', backend }] } }] },
        },
        'spec.rules[0].http.paths[0].path',
        /must be an absolute path/,
      );
      await refused(
        ingresses,
        { metadata: { name: 'x' }, spec: { defaultBackend: { service: { name: 'web', port: {} } } } },
        'spec.defaultBackend.service.port',
      );
      await refused(
        '/apis/networking.k8s.io/v1/ingressclasses',
        { metadata: { name: 'x' }, spec: { controller: 'nginx' } },
        'spec.controller',
        /must be a domain-prefixed path/,
      );
    });
  });

  describe('APIServices', () => {
    it('stores an APIService and prints its service and availability', async () => {
      await apply(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: metrics-server, namespace: kube-system}
`);
      const stored = await getJson('apiservice', 'v1beta1.metrics.k8s.io', false);
      assert.equal(stored.spec.service.port, 443);
      const [row] = tableRecords(await kubectl.ok('get', 'apiservices', 'v1beta1.metrics.k8s.io'));
      assert.deepEqual(
        [row.NAME, row.SERVICE, row.AVAILABLE],
        ['v1beta1.metrics.k8s.io', 'kube-system/metrics-server', 'Unknown'],
      );
      await refused(
        '/apis/apiregistration.k8s.io/v1/apiservices',
        {
          metadata: { name: 'wrong' },
          spec: { group: 'a.example.com', version: 'v1', groupPriorityMinimum: 1, versionPriority: 1 },
        },
        'metadata.name',
        /must be `spec\.version\+"\."\+spec\.group`: "v1\.a\.example\.com"/,
      );
    });
  });
});
