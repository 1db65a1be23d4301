import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { opensslUnavailable } from '@certkit/testenv/pki/ca';
import { type PythonClient, pythonClientFor, pythonClientSkip } from '@certkit/testenv/python/python-client';

/**
 * The new built-in kinds through the official Python client's typed APIs: a Service gets its cluster IP, a
 * Deployment is scaled through its scale subresource, a CSR is approved through approval and given its
 * certificate through status, as a signer written in Python would.
 */

const skip = pythonClientSkip || opensslUnavailable() || false;
let t: TestServer;
let python: PythonClient;

before(async () => {
  if (skip) return;
  t = await startTestServer();
  python = pythonClientFor(t.kubeconfigPath);
});
after(async () => {
  await t?.close();
});

function openssl(args: string[]): string {
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

describe('built-in kinds through python3-kubernetes', { skip }, () => {
  it('creates a Service and scales a Deployment', async () => {
    const result = await python.run(`
apps = client.AppsV1Api()
svc = core.create_namespaced_service('default', client.V1Service(
    metadata=client.V1ObjectMeta(name='py-web'),
    spec=client.V1ServiceSpec(selector={'app': 'web'}, ports=[client.V1ServicePort(port=80)])))
apps.create_namespaced_deployment('default', {
    'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'py-web'},
    'spec': {'selector': {'matchLabels': {'app': 'web'}},
             'template': {'metadata': {'labels': {'app': 'web'}},
                          'spec': {'containers': [{'name': 'web', 'image': 'nginx:1.27'}]}}}})
scale = apps.patch_namespaced_deployment_scale('py-web', 'default', {'spec': {'replicas': 4}})
dep = apps.read_namespaced_deployment('py-web', 'default')
emit({'clusterIP': svc.spec.cluster_ip, 'targetPort': svc.spec.ports[0].target_port,
      'protocol': svc.spec.ports[0].protocol, 'scale': scale.spec.replicas,
      'selector': scale.status.selector, 'replicas': dep.spec.replicas})
`);
    assert.match(result.clusterIP, /^10\.0\.0\.\d+$/);
    assert.deepEqual(
      { ...result, clusterIP: undefined },
      { clusterIP: undefined, targetPort: 80, protocol: 'TCP', scale: 4, selector: 'app=web', replicas: 4 },
    );
  });

  it('approves a CSR and writes its certificate as a signer', async () => {
    const csr = openssl([
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      '/dev/null',
      '-subj',
      '/CN=py',
    ]);
    const cert = openssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      '/dev/null',
      '-subj',
      '/CN=py',
      '-days',
      '1',
    ]);
    const result = await python.run(
      `
import base64
certs = client.CertificatesV1Api()
created = certs.create_certificate_signing_request(client.V1CertificateSigningRequest(
    metadata=client.V1ObjectMeta(name='py-csr'),
    spec=client.V1CertificateSigningRequestSpec(
        request=base64.b64encode(ARGS['csr'].encode()).decode(),
        signer_name='example.com/py-signer', usages=['client auth'])))
created.status.conditions = [client.V1CertificateSigningRequestCondition(
    type='Approved', status='True', reason='PythonApprove', message='approved by a test')]
approved = certs.replace_certificate_signing_request_approval('py-csr', created)
approved.status.certificate = base64.b64encode(ARGS['cert'].encode()).decode()
issued = certs.replace_certificate_signing_request_status('py-csr', approved)
bad = api_error(lambda: certs.patch_certificate_signing_request_status(
    'py-csr', {'status': {'certificate': base64.b64encode(b'not a certificate').decode()}}))
emit({'user': created.spec.username, 'conditions': [c.type for c in issued.status.conditions],
      'certificate': base64.b64decode(issued.status.certificate).decode(), 'bad': bad})
`,
      { csr, cert },
    );
    assert.equal(result.user, 'certkit-admin');
    assert.deepEqual(result.conditions, ['Approved']);
    assert.equal(result.certificate, cert);
    assert.equal(result.bad.status, 422);
    assert.match(
      result.bad.body.message,
      /status\.certificate: Forbidden: updates may not modify existing certificate content/,
    );
  });
});
