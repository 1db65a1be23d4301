import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { buildCertificateRequest, generatePrivateKey } from '@certkit/certificates/pki/index';
import { startCli, type RunningCli } from '@certkit/testenv/cli/cli-process';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';

/**
 * cert-manager's webhook records who asked for a certificate: on `certkit apiserver` a CertificateRequest's
 * spec.username, uid, groups and extra are the creating request's user (the admin, a ServiceAccount token's,
 * an impersonated one), whatever the client sent, and an update may not change them. Driven with kubectl,
 * whose `auth whoami` (a SelfSubjectReview) says what the server takes each caller for.
 */

interface Identity {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

describe('CertificateRequest requester identity', { skip: kubectlSkip }, () => {
  let dir: string;
  let cli: RunningCli;
  let kubectl: Kubectl;
  let csr: string;
  let counter = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-cr-identity-'));
    cli = await startCli(['apiserver', '--data-dir', dir, '--port', '0']);
    kubectl = kubectlFor({ ...process.env, KUBECONFIG: join(dir, 'kubeconfig') }, dir);
    // As a user installs cert-manager's API on a cluster.
    await kubectl.ok('apply', '-f', fileURLToPath(new URL('../../../deploy/crds.yaml', import.meta.url)));
    await kubectl.ok('wait', '--for=condition=Established', 'crd/certificaterequests.cert-manager.io');
    // What the users other than the admin may do: create, read and apply CertificateRequests.
    await kubectl.ok(
      ...['create', 'role', 'cr-maker', '-n', 'default', '--verb=create,get,patch'],
      '--resource=certificaterequests.cert-manager.io',
    );
    await kubectl.ok(
      ...['create', 'rolebinding', 'developers-cr-maker', '-n', 'default', '--role=cr-maker'],
      '--group=developers',
    );
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    csr = Buffer.from(await buildCertificateRequest({ commonName: 'identity.example.com' }, key)).toString(
      'base64',
    );
  });

  after(async () => {
    await cli?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A CertificateRequest manifest; `forged` is what a client might try to claim in the identity fields. */
  function manifest(name: string, forged: Identity = {}): Promise<string> {
    const spec = { issuerRef: { name: 'ca' }, request: csr, ...forged };
    return kubectl.manifest(
      JSON.stringify({
        apiVersion: 'cert-manager.io/v1',
        kind: 'CertificateRequest',
        metadata: { name, namespace: 'default' },
        spec,
      }),
    );
  }

  const nextName = () => `identity-${++counter}`;

  async function whoami(...as: string[]): Promise<Identity> {
    return JSON.parse(await kubectl.ok('auth', 'whoami', '-o', 'json', ...as)).status.userInfo as Identity;
  }

  async function identityOf(name: string): Promise<Identity> {
    const cr = JSON.parse(await kubectl.ok('get', 'certificaterequest', name, '-n', 'default', '-o', 'json'));
    const { username, uid, groups, extra } = cr.spec as Identity;
    return { username, uid, groups, extra };
  }

  /** The identity as the CertificateRequest must carry it: uid always written (empty when the user has none). */
  function expected(user: Identity): Identity {
    return { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra };
  }

  it('records the admin as the requester, overwriting what the client claimed', async () => {
    const admin = await whoami();
    assert.equal(admin.username, 'certkit-admin');
    assert.ok(admin.groups?.includes('system:masters'), JSON.stringify(admin));
    const name = nextName();
    const forged = { username: 'mallory', uid: 'forged', groups: ['system:masters'], extra: { a: ['b'] } };
    await kubectl.ok('create', '-f', await manifest(name, forged));
    assert.deepEqual(await identityOf(name), expected(admin));
  });

  it('records the user of a ServiceAccount token, with its uid and extra', async () => {
    await kubectl.ok('create', 'serviceaccount', 'requester', '-n', 'default');
    await kubectl.ok(
      ...['create', 'rolebinding', 'sa-cr-maker', '-n', 'default', '--role=cr-maker'],
      '--serviceaccount=default:requester',
    );
    const token = (await kubectl.ok('create', 'token', 'requester', '-n', 'default')).trim();
    const sa = await whoami('--token', token);
    const saUid = (
      await kubectl.ok(
        'get',
        'serviceaccount',
        'requester',
        '-n',
        'default',
        '-o',
        'jsonpath={.metadata.uid}',
      )
    ).trim();
    assert.equal(sa.username, 'system:serviceaccount:default:requester');
    assert.equal(sa.uid, saUid);
    assert.ok(sa.extra?.['authentication.kubernetes.io/credential-id'], JSON.stringify(sa));
    const name = nextName();
    await kubectl.ok('--token', token, 'create', '-f', await manifest(name));
    assert.deepEqual(await identityOf(name), expected(sa));
  });

  it('records the impersonated user (--as, --as-group), by create and by server-side apply', async () => {
    const as = ['--as', 'alice', '--as-group', 'developers', '--as-uid', 'alice-uid'];
    const alice = await whoami(...as);
    assert.equal(alice.username, 'alice');
    assert.equal(alice.uid, 'alice-uid');
    assert.ok(alice.groups?.includes('developers'), JSON.stringify(alice));
    const created = nextName();
    await kubectl.ok(...as, 'create', '-f', await manifest(created, { username: 'bob' }));
    assert.deepEqual(await identityOf(created), expected(alice));
    const applied = nextName();
    await kubectl.ok(...as, 'apply', '--server-side', '-f', await manifest(applied));
    assert.deepEqual(await identityOf(applied), expected(alice));
  });

  it('fills the identity on a dry-run create (what cmctl check api looks for), storing nothing', async () => {
    const name = nextName();
    const out = await kubectl.ok('create', '--dry-run=server', '-o', 'json', '-f', await manifest(name));
    assert.equal(JSON.parse(out).spec.username, 'certkit-admin');
    const got = await kubectl.run('get', 'certificaterequest', name, '-n', 'default');
    assert.match(got.stderr, /NotFound/);
  });

  it('refuses an update that changes the identity, with the field path', async () => {
    const name = nextName();
    await kubectl.ok('create', '-f', await manifest(name));
    const patched = await kubectl.run(
      ...['patch', 'certificaterequest', name, '-n', 'default', '--type=merge'],
      ...['-p', JSON.stringify({ spec: { username: 'mallory', groups: ['system:masters'] } })],
    );
    assert.notEqual(patched.code, 0);
    // kubectl lists a 422's causes one a line; upstream's order: the identity plugin, then the spec check.
    assert.match(
      patched.stderr,
      new RegExp(
        `The CertificateRequest "${name}" is invalid: \\n` +
          '\\* spec\\.username: Forbidden: username identity cannot be changed once set\\n' +
          '\\* spec\\.groups: Forbidden: groups identity cannot be changed once set\\n' +
          '\\* spec: Forbidden: cannot change spec after creation',
      ),
    );
    assert.equal((await identityOf(name)).username, 'certkit-admin');
  });
});
