import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startCli } from '@certkit/testenv/cli/cli-process';
import { eventually } from '@certkit/testenv/eventually';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

/**
 * deploy/ as users apply it, with kubectl, on `certkit apiserver`: `kubectl apply -f deploy/` succeeds, and
 * `kubectl auth can-i` shows each role of deploy/rbac.yaml granting the controller's ServiceAccount what it
 * needs and nothing it must not have (asked both with --as and with a token of the ServiceAccount itself).
 * Then `certkit up`: its controller runs under that ServiceAccount, so taking its binding away stops it.
 */

const DEPLOY = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const SA = 'system:serviceaccount:certkit:certkit';

async function withServer(command: 'apiserver' | 'up', extra: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), `certkit-deploy-${command}-`));
  const cli = await startCli([command, '--data-dir', dir, '--port', '0', ...extra]);
  const kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), KUBECACHEDIR: join(dir, 'kube-cache') },
    dir,
  );
  return {
    cli,
    kubectl,
    async close() {
      await cli.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `kubectl auth can-i VERB RESOURCE [flags]` as `who` ('yes' or 'no'; kubectl exits 1 for no). */
async function canI(kubectl: Kubectl, who: string[], ...args: string[]): Promise<string> {
  const r = await kubectl.run('auth', 'can-i', ...args, ...who);
  assert.ok(r.code === 0 || r.code === 1, `kubectl auth can-i ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** What the controller's ServiceAccount may do (deploy/rbac.yaml), as `kubectl auth can-i` arguments. */
const ALLOWED: string[][] = [
  // ClusterRole certkit-controller, in any namespace.
  ['get', 'certificates.cert-manager.io', '-n', 'team-a'],
  ['watch', 'certificates.cert-manager.io', '--all-namespaces'],
  ['update', 'certificates.cert-manager.io', '--subresource=status', '-n', 'team-a'],
  ['update', 'certificates.cert-manager.io', '--subresource=finalizers', '-n', 'team-a'],
  ['create', 'certificaterequests.cert-manager.io', '-n', 'team-a'],
  ['delete', 'certificaterequests.cert-manager.io', '-n', 'team-a'],
  ['patch', 'issuers.cert-manager.io', '--subresource=status', '-n', 'team-a'],
  ['list', 'clusterissuers.cert-manager.io'],
  ['create', 'orders.acme.cert-manager.io', '-n', 'team-a'],
  ['update', 'challenges.acme.cert-manager.io', '--subresource=status', '-n', 'team-a'],
  ['create', 'secrets', '-n', 'team-a'],
  ['delete', 'secrets', '-n', 'team-a'],
  ['create', 'events', '-n', 'team-a'],
  ['get', 'namespaces'],
  // ClusterRole certkit-controller-ingress-shim: the Certificates annotated Ingresses and Gateways ask for.
  ['create', 'certificates.cert-manager.io', '-n', 'team-a'],
  ['delete', 'certificates.cert-manager.io', '-n', 'team-a'],
  ['watch', 'ingresses.networking.k8s.io', '--all-namespaces'],
  ['update', 'ingresses.networking.k8s.io', '--subresource=finalizers', '-n', 'team-a'],
  // Role certkit-leader-election, in certkit only, its own Lease by name.
  ['get', 'leases.coordination.k8s.io/certkit-controller', '-n', 'certkit'],
  ['update', 'leases.coordination.k8s.io/certkit-controller', '-n', 'certkit'],
  ['create', 'leases.coordination.k8s.io', '-n', 'certkit'],
];

/** What it must not do. */
const REFUSED: string[][] = [
  ['delete', 'namespaces'],
  ['create', 'namespaces'],
  ['delete', 'issuers.cert-manager.io', '-n', 'team-a'],
  ['update', 'ingresses.networking.k8s.io', '-n', 'team-a'],
  ['delete', 'ingresses.networking.k8s.io', '-n', 'team-a'],
  ['list', 'clusterroles.rbac.authorization.k8s.io'],
  ['create', 'clusterrolebindings.rbac.authorization.k8s.io'],
  ['create', 'serviceaccounts', '--subresource=token', '-n', 'certkit'],
  ['list', 'configmaps', '-n', 'team-a'],
  ['create', 'pods', '-n', 'team-a'],
  ['delete', 'customresourcedefinitions.apiextensions.k8s.io'],
  // Leases: only its own, only in its namespace.
  ['get', 'leases.coordination.k8s.io/kube-scheduler', '-n', 'certkit'],
  ['update', 'leases.coordination.k8s.io/certkit-controller', '-n', 'kube-system'],
  ['list', 'leases.coordination.k8s.io', '-n', 'certkit'],
  ['*', '*'],
];

describe('kubectl apply -f deploy/ on certkit apiserver', { skip: kubectlSkip }, () => {
  let server: Awaited<ReturnType<typeof withServer>>;
  let token: string;

  before(async () => {
    server = await withServer('apiserver');
  });

  after(async () => {
    await server?.close();
  });

  it('applies every manifest in deploy/, twice (the second changes nothing)', async () => {
    const files = (await readdir(DEPLOY)).filter((f) => /\.(ya?ml|json)$/.test(f));
    assert.ok(files.includes('rbac.yaml') && files.includes('crds.yaml'), files.join(' '));
    const first = await server.kubectl.ok('apply', '-f', DEPLOY);
    assert.match(first, /clusterrole\.rbac\.authorization\.k8s\.io\/certkit-controller created/);
    assert.match(first, /serviceaccount\/certkit created/);
    assert.match(
      first,
      /customresourcedefinition\.apiextensions\.k8s\.io\/certificates\.cert-manager\.io created/,
    );
    const second = await server.kubectl.ok('apply', '-f', DEPLOY);
    assert.doesNotMatch(second, / (created|configured)$/m, second);
  });

  it('kubectl auth can-i --as the ServiceAccount: yes for what the controller needs', async () => {
    for (const args of ALLOWED) {
      assert.equal(await canI(server.kubectl, ['--as', SA], ...args), 'yes', `can-i ${args.join(' ')}`);
    }
  });

  it('kubectl auth can-i --as the ServiceAccount: no for what it must not do', async () => {
    for (const args of REFUSED) {
      assert.equal(await canI(server.kubectl, ['--as', SA], ...args), 'no', `can-i ${args.join(' ')}`);
    }
  });

  it('the same answers with a token of the ServiceAccount itself (kubectl create token)', async () => {
    token = (await server.kubectl.ok('create', 'token', 'certkit', '-n', 'certkit')).trim();
    const whoami = await server.kubectl.ok(
      'auth',
      'whoami',
      '--token',
      token,
      '-o',
      'jsonpath={.status.userInfo.username}',
    );
    assert.equal(whoami, SA);
    assert.equal(
      await canI(server.kubectl, ['--token', token], 'create', 'certificaterequests.cert-manager.io'),
      'yes',
    );
    assert.equal(await canI(server.kubectl, ['--token', token], 'delete', 'namespaces'), 'no');
    const forbidden = await server.kubectl.run('delete', 'namespace', 'default', '--token', token);
    assert.notEqual(forbidden.code, 0);
    assert.match(
      forbidden.stderr,
      /namespaces "default" is forbidden: User "system:serviceaccount:certkit:certkit" cannot delete resource "namespaces" in API group "" in the namespace "default"|cannot delete resource "namespaces" in API group "" at the cluster scope/,
    );
  });

  it('kubectl auth can-i --list for the ServiceAccount names the manifest rules', async () => {
    const list = await server.kubectl.ok('auth', 'can-i', '--list', '-n', 'certkit', '--as', SA);
    assert.match(
      list,
      /^certificaterequests\.cert-manager\.io\s+\[\]\s+\[\]\s+\[get list watch create update patch delete\]$/m,
    );
    assert.match(list, /^leases\.coordination\.k8s\.io\s+\[\]\s+\[certkit-controller\]\s+\[get update\]$/m);
  });

  it('kubectl auth can-i --as the cainjector’s ServiceAccount: what deploy/cainjector-rbac.yaml grants, no more', async () => {
    const cainjector = ['--as', 'system:serviceaccount:certkit:certkit-cainjector'];
    const allowed = [
      ['patch', 'validatingwebhookconfigurations.admissionregistration.k8s.io'],
      ['patch', 'mutatingwebhookconfigurations.admissionregistration.k8s.io'],
      ['patch', 'apiservices.apiregistration.k8s.io'],
      ['patch', 'customresourcedefinitions.apiextensions.k8s.io'],
      ['watch', 'secrets', '--all-namespaces'],
      ['get', 'certificates.cert-manager.io', '-n', 'team-a'],
      ['update', 'leases.coordination.k8s.io/cert-manager-cainjector-leader-election', '-n', 'certkit'],
    ];
    for (const args of allowed)
      assert.equal(await canI(server.kubectl, cainjector, ...args), 'yes', `can-i ${args.join(' ')}`);
    const refused = [
      ['create', 'secrets', '-n', 'team-a'],
      ['update', 'secrets', '-n', 'team-a'],
      ['delete', 'validatingwebhookconfigurations.admissionregistration.k8s.io'],
      ['update', 'certificates.cert-manager.io', '-n', 'team-a'],
      ['update', 'leases.coordination.k8s.io/certkit-controller', '-n', 'certkit'],
    ];
    for (const args of refused)
      assert.equal(await canI(server.kubectl, cainjector, ...args), 'no', `can-i ${args.join(' ')}`);
  });
});

describe('certkit up runs its controller under deploy/rbac.yaml', { skip: kubectlSkip }, () => {
  let server: Awaited<ReturnType<typeof withServer>>;

  before(async () => {
    server = await withServer('up', ['--metrics-bind-address', '0']);
  });

  after(async () => {
    await server?.close();
  });

  const certificate = (name: string) => `apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: selfsigned, namespace: default}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: ${name}, namespace: default}
spec: {secretName: ${name}, dnsNames: [${name}.example.com], issuerRef: {name: selfsigned}}
`;

  const ready = (name: string) =>
    server.kubectl
      .run('get', 'certificate', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')
      .then((r) => r.stdout);

  it('kubectl apply -f deploy/ finds what up created as kubectl would have left it: no warning, nothing changed', async () => {
    // On a fresh cluster nothing of deploy/ exists yet; up created the CRDs and deploy/rbac.yaml's objects
    // itself, with the annotation a first `kubectl apply` writes (docs/adr/1865).
    const applied = await server.kubectl.run('apply', '-f', DEPLOY);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stderr, '');
    for (const object of [
      'namespace/certkit',
      'serviceaccount/certkit',
      'clusterrole.rbac.authorization.k8s.io/certkit-controller',
      'clusterrolebinding.rbac.authorization.k8s.io/certkit-controller',
      'role.rbac.authorization.k8s.io/certkit-leader-election',
      'rolebinding.rbac.authorization.k8s.io/certkit-leader-election',
      // deploy/cainjector-rbac.yaml, which up applies for its cainjector.
      'serviceaccount/certkit-cainjector',
      'clusterrole.rbac.authorization.k8s.io/certkit-cainjector',
      'clusterrolebinding.rbac.authorization.k8s.io/certkit-cainjector',
      'role.rbac.authorization.k8s.io/certkit-cainjector:leaderelection',
      'customresourcedefinition.apiextensions.k8s.io/certificates.cert-manager.io',
      'customresourcedefinition.apiextensions.k8s.io/challenges.acme.cert-manager.io',
    ]) {
      assert.match(
        applied.stdout,
        new RegExp(`^${object.replaceAll('.', '\\.')} unchanged$`, 'm'),
        applied.stdout,
      );
    }
  });

  it('applied the manifest at startup and issues under it', async () => {
    await server.kubectl.ok('get', 'clusterrolebinding', 'certkit-controller');
    await server.kubectl.ok('apply', '-f', await server.kubectl.manifest(certificate('with-binding')));
    await eventually(
      async () => ((await ready('with-binding')) === 'True' ? true : undefined),
      'Ready',
      30_000,
    );
  });

  it('issues nothing once its ClusterRoleBinding is gone (it is not the admin), and again once re-applied', async () => {
    await server.kubectl.ok('delete', 'clusterrolebinding', 'certkit-controller');
    await server.kubectl.ok('apply', '-f', await server.kubectl.manifest(certificate('without-binding')));
    // The controller's writes are refused: no CertificateRequest appears for the new Certificate.
    await new Promise((r) => setTimeout(r, 3000));
    const requests = await server.kubectl.ok('get', 'certificaterequests', '-o', 'name');
    assert.doesNotMatch(requests, /without-binding/);
    assert.notEqual(await ready('without-binding'), 'True');
    await server.kubectl.ok('apply', '-f', join(DEPLOY, 'rbac.yaml'));
    await eventually(
      async () => ((await ready('without-binding')) === 'True' ? true : undefined),
      'Ready after re-applying deploy/rbac.yaml',
      60_000,
    );
  });
});
