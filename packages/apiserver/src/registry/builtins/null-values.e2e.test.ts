import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * `null` anywhere in a body is the zero value of its Go type, never a crash: creates and patches of the
 * built-in kinds carrying nulls in lists and objects are answered with 201/200 or a 422, never a 5xx, and the
 * server logs no error. Null list items are stored as Go stores them (a zero struct, an empty string).
 */

let t: TestServer;
const errors: unknown[] = [];

before(async () => {
  t = await startTestServer({ log: (e) => void (e.level === 'error' && errors.push(e)) });
});
after(async () => {
  await t?.close();
});

const bodies: [string, Record<string, unknown>][] = [
  ['/api/v1/namespaces/default/services', { spec: { ports: [null], selector: null, externalIPs: [null] } }],
  ['/api/v1/namespaces/default/services', { spec: null, status: null }],
  [
    '/api/v1/namespaces/default/services',
    { spec: { ports: [{ port: 80, targetPort: null, nodePort: null }] } },
  ],
  ['/api/v1/namespaces/default/endpoints', { subsets: [null, { addresses: [null], ports: [null] }] }],
  [
    '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
    {
      addressType: 'IPv4',
      endpoints: [null, { addresses: [null], conditions: null }],
      ports: [null, { port: null }],
    },
  ],
  [
    '/api/v1/namespaces/default/pods',
    {
      spec: {
        containers: [
          null,
          { name: 'x', image: 'y', ports: [null], env: [null], resources: { limits: null } },
        ],
        tolerations: [null],
        volumes: [null],
      },
    },
  ],
  ['/api/v1/namespaces/default/pods', { spec: { containers: [{ name: 'x', image: 'y', resources: null }] } }],
  ['/api/v1/namespaces/default/pods', { spec: null }],
  [
    '/apis/apps/v1/namespaces/default/deployments',
    {
      spec: {
        selector: { matchExpressions: [null], matchLabels: null },
        template: { metadata: null, spec: { containers: [null] } },
        strategy: { rollingUpdate: null },
      },
    },
  ],
  [
    '/apis/apps/v1/namespaces/default/deployments',
    { spec: { selector: null, template: null, strategy: null } },
  ],
  [
    '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
    {
      spec: {
        rules: [null, { http: { paths: [null, { backend: null }] } }, { http: null }],
        tls: [null, { hosts: [null] }],
        defaultBackend: { service: { port: null } },
      },
    },
  ],
  ['/apis/networking.k8s.io/v1/ingressclasses', { spec: { parameters: null } }],
  ['/apis/networking.k8s.io/v1/ingressclasses', { spec: null }],
  [
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    { spec: { request: null, usages: [null], extra: null } },
  ],
  ['/apis/certificates.k8s.io/v1/certificatesigningrequests', { spec: null, status: { conditions: [null] } }],
  ['/apis/apiregistration.k8s.io/v1/apiservices', { spec: { service: null } }],
  ['/apis/apiregistration.k8s.io/v1/apiservices', { spec: null }],
];

describe('null values in built-in kinds', () => {
  it('are answered with 201 or 422, never a 5xx', async () => {
    for (const [i, [path, body]] of bodies.entries()) {
      const r = await t.fetch('POST', path, { body: { metadata: { name: `nulls-${i}` }, ...body } });
      assert.ok(
        r.status === 201 || r.status === 422,
        `${path} ${JSON.stringify(body)}: ${r.status} ${r.text}`,
      );
    }
    assert.deepEqual(errors, []);
  });

  it('store null list items as their zero value', async () => {
    const r = await t.fetch('POST', '/api/v1/namespaces/default/services', {
      body: {
        metadata: { name: 'zero-items' },
        spec: { ports: [{ port: 80 }], externalIPs: ['192.0.2.1'], clusterIPs: null },
      },
    });
    assert.equal(r.status, 201, r.text);
    const patched = await t.fetch('PATCH', '/api/v1/namespaces/default/services/zero-items', {
      body: { spec: { ports: [{ port: 80 }, null] } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    // The null port is a zero ServicePort, which validation then refuses by its fields.
    assert.equal(patched.status, 422, patched.text);
    assert.match(
      patched.json.message,
      /spec\.ports\[1\]\.port: Invalid value: 0: must be between 1 and 65535, inclusive/,
    );
    assert.deepEqual(errors, []);
  });
});
