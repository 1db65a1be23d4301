import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { eventually } from '@certkit/testenv/eventually';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { tableRecords } from '@certkit/testenv/kubectl/table';

/**
 * Services, Endpoints and EndpointSlices driven by kubectl as on a cluster: printer columns, the defaults
 * kube-apiserver fills, cluster IPs and node ports taken from the server's ranges (and given back), 422s
 * naming the field, the status subresource.
 */

const skip = kubectlSkip;
let t: TestServer;
let workDir: string;
let kubectl: Kubectl;
const NS = 'shop';

async function apply(yaml: string): Promise<string> {
  return kubectl.ok('apply', '-f', await kubectl.manifest(yaml));
}

async function getJson(resource: string, name: string): Promise<any> {
  return JSON.parse(await kubectl.ok('get', resource, name, '-n', NS, '-o', 'json'));
}

/** The numeric value of a dotted IPv4 address. */
const ipNumber = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);

describe('Services, Endpoints and EndpointSlices through kubectl', { skip }, () => {
  before(async () => {
    t = await startTestServer({ serviceClusterIpRange: '10.96.0.0/24', serviceNodePortRange: '30000-30099' });
    workDir = await mkdtemp(join(tmpdir(), 'certkit-services-'));
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

  it('defaults ports and allocates a cluster IP from the service CIDR; kubectl get prints the columns', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${NS}}
spec:
  selector: {app: web, tier: front}
  ports:
  - {name: http, port: 80}
  - {name: metrics, port: 9402, targetPort: metrics}
`);
    const svc = await getJson('service', 'web');
    assert.equal(svc.spec.type, 'ClusterIP');
    assert.equal(svc.spec.sessionAffinity, 'None');
    assert.equal(svc.spec.internalTrafficPolicy, 'Cluster');
    assert.deepEqual(svc.spec.ports, [
      { name: 'http', port: 80, protocol: 'TCP', targetPort: 80 },
      { name: 'metrics', port: 9402, protocol: 'TCP', targetPort: 'metrics' },
    ]);
    const ip = svc.spec.clusterIP as string;
    assert.match(ip, /^10\.96\.0\.\d+$/);
    assert.ok(ipNumber(ip) > ipNumber('10.96.0.0') && ipNumber(ip) < ipNumber('10.96.0.255'), ip);
    assert.deepEqual(svc.spec.clusterIPs, [ip]);
    assert.deepEqual(svc.spec.ipFamilies, ['IPv4']);
    assert.equal(svc.spec.ipFamilyPolicy, 'SingleStack');
    assert.deepEqual(svc.status, { loadBalancer: {} });

    const [row] = tableRecords(await kubectl.ok('get', 'svc', 'web', '-n', NS, '-o', 'wide'));
    assert.deepEqual(
      { ...row, AGE: undefined },
      {
        NAME: 'web',
        TYPE: 'ClusterIP',
        'CLUSTER-IP': ip,
        'EXTERNAL-IP': '<none>',
        'PORT(S)': '80/TCP,9402/TCP',
        AGE: undefined,
        SELECTOR: 'app=web,tier=front',
      },
    );
    // Re-applying a manifest that never named the cluster IP keeps it, as does kubectl replace.
    await apply(`apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${NS}, labels: {team: shop}}
spec:
  selector: {app: web, tier: front}
  ports:
  - {name: http, port: 80}
  - {name: metrics, port: 9402, targetPort: metrics}
`);
    assert.equal((await getJson('service', 'web')).spec.clusterIP, ip);
    const manifest = await kubectl.manifest(`apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${NS}}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080}]
`);
    await kubectl.ok('replace', '-f', manifest);
    const replaced = await getJson('service', 'web');
    assert.equal(replaced.spec.clusterIP, ip);
    assert.deepEqual(replaced.spec.ports, [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 8080 }]);
  });

  it('prints headless, NodePort, LoadBalancer and ExternalName Services as kubectl does on a cluster', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: db, namespace: ${NS}}
spec: {clusterIP: None, selector: {app: db}, ports: [{port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: edge, namespace: ${NS}}
spec: {type: NodePort, selector: {app: edge}, ports: [{port: 443, targetPort: 8443}]}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: ${NS}}
spec: {type: LoadBalancer, selector: {app: lb}, ports: [{port: 80, protocol: UDP}]}
---
apiVersion: v1
kind: Service
metadata: {name: upstream, namespace: ${NS}}
spec: {type: ExternalName, externalName: api.example.com}
`);
    const edge = await getJson('service', 'edge');
    const nodePort = edge.spec.ports[0].nodePort as number;
    assert.ok(nodePort >= 30000 && nodePort <= 30099, String(nodePort));
    assert.equal(edge.spec.externalTrafficPolicy, 'Cluster');
    const lb = await getJson('service', 'lb');
    assert.equal(lb.spec.allocateLoadBalancerNodePorts, true);
    const upstream = await getJson('service', 'upstream');
    assert.equal(upstream.spec.clusterIP, undefined);

    const rows = tableRecords(await kubectl.ok('get', 'services', '-n', NS, 'db', 'edge', 'lb', 'upstream'));
    const cells = rows.map((r) => [r.NAME, r.TYPE, r['CLUSTER-IP'], r['EXTERNAL-IP'], r['PORT(S)']]);
    assert.deepEqual(cells, [
      ['db', 'ClusterIP', 'None', '<none>', '5432/TCP'],
      ['edge', 'NodePort', edge.spec.clusterIP, '<none>', `443:${nodePort}/TCP`],
      ['lb', 'LoadBalancer', lb.spec.clusterIP, '<pending>', `80:${lb.spec.ports[0].nodePort}/UDP`],
      ['upstream', 'ExternalName', '<none>', 'api.example.com', '<none>'],
    ]);
  });

  it('refuses a taken cluster IP or node port with 422, and frees them when the Service goes', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: pinned, namespace: ${NS}}
spec: {clusterIP: 10.96.0.10, type: NodePort, ports: [{port: 80, nodePort: 30010}]}
`);
    const taken = await kubectl.run(
      'create',
      '-f',
      await kubectl.manifest(`apiVersion: v1
kind: Service
metadata: {name: pinned-too, namespace: ${NS}}
spec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}
`),
    );
    assert.equal(taken.code, 1);
    assert.match(
      taken.stderr,
      /The Service "pinned-too" is invalid: spec\.clusterIPs: Invalid value: \[\]string\{"10\.96\.0\.10"\}: failed to allocate IP 10\.96\.0\.10: provided IP is already allocated/,
    );
    const portTaken = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
      body: {
        metadata: { name: 'port-too' },
        spec: { type: 'NodePort', ports: [{ port: 81, nodePort: 30010 }] },
      },
    });
    assert.equal(portTaken.status, 422);
    assert.equal(portTaken.json.details.causes[0].field, 'spec.ports[0].nodePort');
    assert.match(portTaken.json.message, /provided port is already allocated/);
    // The failed create gave back the cluster IP it had taken before the node port failed.
    const outOfRange = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
      body: { metadata: { name: 'far' }, spec: { clusterIP: '10.1.0.1', ports: [{ port: 80 }] } },
    });
    assert.equal(outOfRange.status, 422);
    assert.match(
      outOfRange.json.message,
      /failed to allocate IP 10\.1\.0\.1: the provided IP \(10\.1\.0\.1\) is not in the valid range\. The range of valid IPs is 10\.96\.0\.0\/24/,
    );

    await kubectl.ok('delete', 'service', 'pinned', '-n', NS);
    // The repair controller releases both once it sees the deletion.
    await eventually(async () => {
      const r = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
        body: {
          metadata: { name: 'pinned-again' },
          spec: { clusterIP: '10.96.0.10', type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] },
        },
      });
      return r.status === 201;
    }, 'the released cluster IP and node port to be allocatable again');
  });

  it('gives a LoadBalancer with externalTrafficPolicy Local a health check node port', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: local-lb, namespace: ${NS}}
spec: {type: LoadBalancer, externalTrafficPolicy: Local, ports: [{port: 443}]}
`);
    const svc = await getJson('service', 'local-lb');
    const health = svc.spec.healthCheckNodePort as number;
    assert.ok(health >= 30000 && health <= 30099, String(health));
    assert.notEqual(health, svc.spec.ports[0].nodePort);
    // Re-applied without it, the Service keeps the port it was given.
    await apply(`apiVersion: v1
kind: Service
metadata: {name: local-lb, namespace: ${NS}, labels: {edge: "true"}}
spec: {type: LoadBalancer, externalTrafficPolicy: Local, ports: [{port: 443}]}
`);
    assert.equal((await getJson('service', 'local-lb')).spec.healthCheckNodePort, health);
    const misplaced = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
      body: { metadata: { name: 'misplaced' }, spec: { healthCheckNodePort: 30050, ports: [{ port: 80 }] } },
    });
    assert.equal(misplaced.status, 422);
    assert.match(
      misplaced.json.message,
      /spec\.healthCheckNodePort: Invalid value: 30050: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'/,
    );
  });

  it('gives every one of many Services created at once its own cluster IP', async () => {
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
          body: { metadata: { name: `burst-${i}` }, spec: { ports: [{ port: 80 }] } },
        }),
      ),
    );
    assert.deepEqual(
      created.map((r) => r.status),
      created.map(() => 201),
    );
    const ips = created.map((r) => r.json.spec.clusterIP as string);
    assert.equal(new Set(ips).size, ips.length, `duplicate cluster IPs: ${ips.join(' ')}`);
  });

  it('a server-side dry run allocates nothing', async () => {
    const manifest = await kubectl.manifest(`apiVersion: v1
kind: Service
metadata: {name: dry, namespace: ${NS}}
spec: {clusterIP: 10.96.0.12, ports: [{port: 80}]}
`);
    const out = await kubectl.ok(
      'create',
      '-f',
      manifest,
      '--dry-run=server',
      '-o',
      'jsonpath={.spec.clusterIP}',
    );
    assert.equal(out, '10.96.0.12');
    await kubectl.ok('create', '-f', manifest);
    assert.equal((await getJson('service', 'dry')).spec.clusterIP, '10.96.0.12');
  });

  it('refuses bad Services with 422 naming the field', async () => {
    const cases: { spec: unknown; field: string; message: RegExp }[] = [
      {
        spec: { ports: [{ port: 0 }] },
        field: 'spec.ports[0].port',
        message: /must be between 1 and 65535, inclusive/,
      },
      { spec: {}, field: 'spec.ports', message: /spec\.ports: Required value/ },
      {
        spec: { ports: [{ port: 80 }, { port: 81 }] },
        field: 'spec.ports[0].name',
        message: /spec\.ports\[0\]\.name: Required value/,
      },
      {
        spec: { ports: [{ port: 80, protocol: 'HTTP' }] },
        field: 'spec.ports[0].protocol',
        message: /Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"/,
      },
      {
        spec: { type: 'Ingress', ports: [{ port: 80 }] },
        field: 'spec.type',
        message: /supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"/,
      },
      { spec: { type: 'ExternalName' }, field: 'spec.externalName', message: /Required value/ },
      {
        spec: { ports: [{ port: 80, nodePort: 30001 }] },
        field: 'spec.ports[0].nodePort',
        message: /may not be used when `type` is 'ClusterIP'/,
      },
      {
        spec: { clusterIP: '10.96.0.300', ports: [{ port: 80 }] },
        field: 'spec.clusterIPs[0]',
        message: /must be a valid IP address/,
      },
      {
        spec: {
          ports: [
            { name: 'a', port: 80 },
            { name: 'b', port: 80 },
          ],
        },
        field: 'spec.ports[1]',
        message:
          /spec\.ports\[1\]: Duplicate value: core\.ServicePort\{Name:"", Protocol:"TCP", AppProtocol:\(\*string\)\(nil\), Port:80,/,
      },
      {
        spec: { clusterIPs: ['10.96.0.40', '10.96.0.41'], ports: [{ port: 80 }] },
        field: 'spec.clusterIPs',
        message: /only one cluster IP may be given/,
      },
      {
        spec: { clusterIP: 'fd00::10', ports: [{ port: 80 }] },
        field: 'spec.clusterIPs[0]',
        message: /only IPv4 cluster IPs are served here/,
      },
      {
        spec: { selector: { 'app/x/y': 'web' }, ports: [{ port: 80 }] },
        field: 'spec.selector',
        message: /spec\.selector: Invalid value: "app\/x\/y"/,
      },
      {
        spec: { ipFamilyPolicy: 'Bogus', ports: [{ port: 80 }] },
        field: 'spec.ipFamilyPolicy',
        message:
          /Unsupported value: "Bogus": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"/,
      },
      {
        spec: { ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 80 }] },
        field: 'spec.ipFamilyPolicy',
        message: /this cluster is not configured for dual-stack services/,
      },
      {
        spec: { ipFamilies: ['IPv6'], ports: [{ port: 80 }] },
        field: 'spec.ipFamilies[0]',
        message: /spec\.ipFamilies\[0\]: Invalid value: "IPv6": not configured on this cluster/,
      },
      {
        spec: { ipFamilies: ['IPv4', 'IPv4'], ports: [{ port: 80 }] },
        field: 'spec.ipFamilies[1]',
        message: /spec\.ipFamilies\[1\]: Duplicate value: "IPv4"/,
      },
      {
        spec: { type: 'ExternalName', externalName: 'db.example.com', ipFamilies: ['IPv4'] },
        field: 'spec.ipFamilies',
        message: /spec\.ipFamilies: Forbidden: must not be set for ExternalName services/,
      },
      {
        spec: { loadBalancerSourceRanges: ['10.0.0.0/8'], ports: [{ port: 80 }] },
        field: 'spec.loadBalancerSourceRanges',
        message: /Forbidden: may only be used when `type` is 'LoadBalancer'/,
      },
      {
        spec: {
          type: 'LoadBalancer',
          loadBalancerSourceRanges: ['10.0.0.0/8', 'office'],
          ports: [{ port: 80 }],
        },
        field: 'spec.loadBalancerSourceRanges',
        message: /Invalid value: "\[10\.0\.0\.0\/8 office\]": must be a list of IP ranges/,
      },
      {
        spec: {
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: -1 } },
          ports: [{ port: 80 }],
        },
        field: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
        message: /Invalid value: -1: must be greater than 0 and less than 86400/,
      },
      {
        spec: { sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } }, ports: [{ port: 80 }] },
        field: 'spec.sessionAffinityConfig',
        message: /Forbidden: must not be set when session affinity is None/,
      },
    ];
    for (const c of cases) {
      const r = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
        body: { metadata: { name: 'bad' }, spec: c.spec },
      });
      assert.equal(r.status, 422, `${JSON.stringify(c.spec)}: ${r.text}`);
      assert.equal(r.json.reason, 'Invalid');
      assert.ok(
        r.json.details.causes.some((cause: { field: string }) => cause.field === c.field),
        `${JSON.stringify(c.spec)}: ${r.text}`,
      );
      assert.match(r.json.message, c.message);
    }
    const bad = await kubectl.run(
      'apply',
      '-f',
      await kubectl.manifest(`apiVersion: v1
kind: Service
metadata: {name: bad, namespace: ${NS}}
spec: {ports: [{port: 70000}]}
`),
    );
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      // targetPort defaulted to the port, so both are out of range, as on kube-apiserver.
      /The Service "bad" is invalid: \n\* spec\.ports\[0\]\.port: Invalid value: 70000: must be between 1 and 65535, inclusive\n\* spec\.ports\[0\]\.targetPort: Invalid value: 70000/,
    );
  });

  it('defaults a ClientIP affinity to 3 hours and keeps a PreferDualStack policy single-stack', async () => {
    const r = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
      body: {
        metadata: { name: 'sticky' },
        spec: { sessionAffinity: 'ClientIP', ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 80 }] },
      },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
    assert.equal(r.json.spec.ipFamilyPolicy, 'PreferDualStack');
    assert.deepEqual(r.json.spec.ipFamilies, ['IPv4']);
  });

  it('keeps the cluster IP immutable, and status behind its subresource', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: front, namespace: ${NS}}
spec: {type: LoadBalancer, ports: [{port: 443}]}
`);
    const change = await kubectl.run(
      'patch',
      'service',
      'front',
      '-n',
      NS,
      '-p',
      '{"spec":{"clusterIP":"10.96.0.99","clusterIPs":["10.96.0.99"]}}',
    );
    assert.equal(change.code, 1);
    assert.match(
      change.stderr,
      /spec\.clusterIPs\[0\]: Invalid value: "10\.96\.0\.99": may not change once set/,
    );

    const path = `/api/v1/namespaces/${NS}/services/front`;
    // The main resource ignores status; the status subresource writes it.
    const ignored = await t.fetch('PATCH', path, {
      body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.7' }] } } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(ignored.status, 200);
    assert.deepEqual(ignored.json.status, { loadBalancer: {} });
    const written = await t.fetch('PATCH', `${path}/status`, {
      body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.7' }] } } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(written.status, 200, written.text);
    const [row] = tableRecords(await kubectl.ok('get', 'svc', 'front', '-n', NS));
    assert.equal(row['EXTERNAL-IP'], '192.0.2.7');

    const described = await kubectl.ok('describe', 'service', 'front', '-n', NS);
    assert.match(described, /Type:\s+LoadBalancer/);
    assert.match(described, /LoadBalancer Ingress:\s+192\.0\.2\.7/);
    assert.match(described, /NodePort:\s+<unset>\s+\d+\/TCP/);
  });

  it('turning a ClusterIP Service into NodePort gives it node ports, and back frees them', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: grower, namespace: ${NS}}
spec: {ports: [{name: http, port: 80}, {name: https, port: 443}]}
`);
    const before = await getJson('service', 'grower');
    await kubectl.ok('patch', 'service', 'grower', '-n', NS, '-p', '{"spec":{"type":"NodePort"}}');
    const grown = await getJson('service', 'grower');
    assert.equal(grown.spec.clusterIP, before.spec.clusterIP);
    const ports = grown.spec.ports.map((p: { nodePort: number }) => p.nodePort);
    assert.equal(ports.length, 2);
    for (const port of ports) assert.ok(port >= 30000 && port <= 30099, String(port));
    assert.notEqual(ports[0], ports[1]);
    await kubectl.ok('patch', 'service', 'grower', '-n', NS, '-p', '{"spec":{"type":"ClusterIP"}}');
    const shrunk = await getJson('service', 'grower');
    assert.deepEqual(
      shrunk.spec.ports.map((p: { nodePort?: number }) => p.nodePort),
      [undefined, undefined],
    );
    await eventually(async () => {
      const r = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
        body: {
          metadata: { name: 'takes-port' },
          spec: { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0] }] },
        },
      });
      return r.status === 201;
    }, 'the node port given up by the change back to ClusterIP to be allocatable');
  });

  it('turning a Service into ExternalName gives its cluster IP back', async () => {
    await apply(`apiVersion: v1
kind: Service
metadata: {name: mover, namespace: ${NS}}
spec: {clusterIP: 10.96.0.14, ports: [{port: 80}]}
`);
    await kubectl.ok(
      'patch',
      'service',
      'mover',
      '-n',
      NS,
      '-p',
      '{"spec":{"type":"ExternalName","externalName":"moved.example.com"}}',
    );
    const moved = await getJson('service', 'mover');
    assert.equal(moved.spec.clusterIP, undefined);
    await eventually(async () => {
      const r = await t.fetch('POST', `/api/v1/namespaces/${NS}/services`, {
        body: { metadata: { name: 'mover-2' }, spec: { clusterIP: '10.96.0.14', ports: [{ port: 80 }] } },
      });
      return r.status === 201;
    }, 'the cluster IP given up by the ExternalName change to be allocatable');
  });

  it('stores and prints Endpoints and EndpointSlices, and refuses bad addresses', async () => {
    await apply(`apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: ${NS}}
subsets:
- addresses: [{ip: 10.244.0.5}, {ip: 10.244.0.6}, {ip: 10.244.0.7}, {ip: 10.244.0.8}]
  ports: [{port: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  namespace: ${NS}
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
- addresses: [10.244.0.5]
  conditions: {ready: true}
- addresses: [10.244.0.6]
`);
    const ep = await getJson('endpoints', 'web');
    assert.equal(ep.subsets[0].ports[0].protocol, 'TCP');
    const [epRow] = tableRecords(await kubectl.ok('get', 'ep', 'web', '-n', NS));
    assert.equal(epRow.ENDPOINTS, '10.244.0.5:8080,10.244.0.6:8080,10.244.0.7:8080 + 1 more...');
    const slice = await getJson('endpointslices.discovery.k8s.io', 'web-abcde');
    assert.equal(slice.ports[0].protocol, 'TCP');
    const [sliceRow] = tableRecords(await kubectl.ok('get', 'endpointslices', '-n', NS));
    assert.deepEqual(
      { ...sliceRow, AGE: undefined },
      {
        NAME: 'web-abcde',
        ADDRESSTYPE: 'IPv4',
        PORTS: '8080',
        ENDPOINTS: '10.244.0.5,10.244.0.6',
        AGE: undefined,
      },
    );
    // kubectl describe service lists the endpoints of the Service's slices.
    const described = await kubectl.ok('describe', 'service', 'web', '-n', NS);
    assert.match(described, /Endpoints:\s+10\.244\.0\.5:8080,10\.244\.0\.6:8080/);

    const badEp = await t.fetch('POST', `/api/v1/namespaces/${NS}/endpoints`, {
      body: {
        metadata: { name: 'bad' },
        subsets: [{ addresses: [{ ip: 'not-an-ip' }], ports: [{ port: 80 }] }],
      },
    });
    assert.equal(badEp.status, 422);
    assert.equal(badEp.json.details.causes[0].field, 'subsets[0].addresses[0].ip');
    const badSlice = await kubectl.run(
      'apply',
      '-f',
      await kubectl.manifest(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: bad, namespace: ${NS}}
addressType: IPv4
endpoints: [{addresses: ["2001:db8::1"]}]
`),
    );
    assert.equal(badSlice.code, 1);
    assert.match(
      badSlice.stderr,
      /The EndpointSlice "bad" is invalid: endpoints\[0\]\.addresses\[0\]: Invalid value: "2001:db8::1": must be a valid IPv4 address/,
    );
    const noType = await t.fetch('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
      body: { metadata: { name: 'no-type' }, endpoints: [] },
    });
    assert.equal(noType.status, 422);
    assert.equal(noType.json.details.causes[0].field, 'addressType');
  });
});
