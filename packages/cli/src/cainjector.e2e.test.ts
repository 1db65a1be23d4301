/**
 * `certkit cainjector` as users run it: a process of its own against `certkit apiserver`, campaigning for
 * cainjector's Lease, injecting a Secret's CA into a webhook configuration kubectl applied, and handing the
 * Lease over when SIGTERM stops it; and `certkit up`, whose in-process cainjector fills the caBundle of a
 * webhook registered with it unless `--cainjector=false`.
 */

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, startCli } from '@certkit/testenv/cli/cli-process';
import { eventually } from '@certkit/testenv/eventually';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function withServer(command: 'apiserver' | 'up', extra: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), `certkit-cainjector-${command}-`));
  dirs.push(dir);
  const cli = await startCli([command, '--data-dir', dir, '--port', '0', ...extra]);
  const kubeconfig = join(dir, 'kubeconfig');
  const kubectl = kubectlFor(
    { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') },
    dir,
  );
  return { dir, cli, kubeconfig, kubectl };
}

const webhookConfiguration = (name: string, annotation: string) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ${name}
  annotations: {${annotation}}
webhooks:
- name: ${name}.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://127.0.0.1:1/validate"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [nothings]}]
`;

async function caBundle(kubectl: Kubectl, name: string): Promise<string> {
  return kubectl.ok(
    'get',
    'validatingwebhookconfiguration',
    name,
    '-o',
    'jsonpath={.webhooks[0].clientConfig.caBundle}',
  );
}

describe('certkit cainjector', { skip: kubectlSkip }, () => {
  it('leads through cainjector’s Lease, injects a Secret’s CA, and releases the Lease on SIGTERM', async () => {
    const { dir, cli, kubeconfig, kubectl } = await withServer('apiserver');
    try {
      await kubectl.ok('create', 'namespace', 'team-a');
      await kubectl.ok('create', 'namespace', 'certkit-le');
      const ca = await readFile(join(dir, 'pki', 'ca.crt'));
      await kubectl.ok(
        'apply',
        '-f',
        await kubectl.manifest(`
apiVersion: v1
kind: Secret
metadata:
  name: webhook-ca
  namespace: team-a
  annotations: {cert-manager.io/allow-direct-injection: "true"}
data:
  ca.crt: ${ca.toString('base64')}
`),
      );
      await kubectl.ok(
        'apply',
        '-f',
        await kubectl.manifest(
          webhookConfiguration('from-secret', 'cert-manager.io/inject-ca-from-secret: team-a/webhook-ca'),
        ),
      );
      const injector = await startCli(
        [
          'cainjector',
          '--kubeconfig',
          kubeconfig,
          '--leader-election-namespace',
          'certkit-le',
          '--metrics-listen-address',
          '0',
          // Short timings so that the test need not wait a minute for anything.
          '--leader-election-lease-duration',
          '4s',
          '--leader-election-renew-deadline',
          '3s',
          '--leader-election-retry-period',
          '1s',
        ],
        { ready: /cainjector: injecting CA bundles on (https:\/\/\S+)/ },
      );
      try {
        assert.match(injector.output(), /leader election in certkit-le/);
        const holder = await eventually(
          async () =>
            (
              await kubectl.run(
                'get',
                'lease',
                '-n',
                'certkit-le',
                'cert-manager-cainjector-leader-election',
                '-o',
                'jsonpath={.spec.holderIdentity}',
              )
            ).stdout || undefined,
          'the cainjector holding its Lease',
          20_000,
          100,
        );
        assert.match(holder, new RegExp(`_${injector.child.pid}$`));
        await eventually(
          async () => (await caBundle(kubectl, 'from-secret')) === ca.toString('base64'),
          'from-secret injected with the Secret’s ca.crt',
          20_000,
          100,
          () => injector.output(),
        );
      } finally {
        assert.equal(await injector.stop('SIGTERM'), 0, injector.output());
      }
      // Released on a clean stop, so that another replica takes over at once.
      const released = await kubectl.ok(
        'get',
        'lease',
        '-n',
        'certkit-le',
        'cert-manager-cainjector-leader-election',
        '-o',
        'jsonpath={.spec.holderIdentity}',
      );
      assert.equal(released, '');
    } finally {
      await cli.stop();
    }
  });

  it('says what is wrong with a flag, in one line, with exit status 2', async () => {
    const gate = await runCli(['cainjector', '--feature-gates', 'NoSuchGate=true']);
    assert.equal(gate.code, 2);
    assert.match(gate.stderr, /unrecognized feature gate: NoSuchGate/);
    const injectable = await runCli(['cainjector', '--enable-apiservices-injectable', 'maybe']);
    assert.equal(injectable.code, 2);
    assert.match(injectable.stderr, /--enable-apiservices-injectable must be true or false/);
  });
});

describe('certkit up and its cainjector', { skip: kubectlSkip }, () => {
  it('fills the caBundle of a webhook registered with it, with the API server’s CA', async () => {
    const { dir, cli, kubectl } = await withServer('up');
    try {
      assert.match(cli.output(), /\(certificate controller running, with the cainjector\)/);
      await kubectl.ok(
        'apply',
        '-f',
        await kubectl.manifest(
          webhookConfiguration('up-hook', 'cert-manager.io/inject-apiserver-ca: "true"'),
        ),
      );
      const ca = (await readFile(join(dir, 'pki', 'ca.crt'))).toString();
      const bundle = await eventually(
        async () => (await caBundle(kubectl, 'up-hook')) || undefined,
        'up-hook injected',
        20_000,
        100,
      );
      assert.ok(Buffer.from(bundle, 'base64').toString().includes(ca.trim().split('\n')[1]!));
    } finally {
      await cli.stop();
    }
  });

  it('runs without it with --cainjector=false', async () => {
    const { cli, kubectl } = await withServer('up', ['--cainjector=false']);
    try {
      assert.match(cli.output(), /\(certificate controller running\)/);
      await kubectl.ok(
        'apply',
        '-f',
        await kubectl.manifest(
          webhookConfiguration('no-injector', 'cert-manager.io/inject-apiserver-ca: "true"'),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(await caBundle(kubectl, 'no-injector'), '');
    } finally {
      await cli.stop();
    }
  });
});
