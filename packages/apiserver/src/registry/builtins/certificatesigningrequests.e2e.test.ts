import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { type Kubectl, kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import { tableRecords } from '@certkit/testenv/kubectl/table';
import { opensslUnavailable } from '@certkit/testenv/pki/ca';

/**
 * CertificateSigningRequests as on a cluster: the requester written by the server, PEM and signature checks
 * on spec.request, `kubectl certificate approve|deny` through the approval subresource (with kubectl's
 * protobuf bodies), a signer writing status.certificate once through the status subresource, and kube's
 * rules on Approved, Denied and Failed conditions. CSRs are made by openssl, a tool nobody here wrote.
 */

const skip = kubectlSkip || opensslUnavailable() || false;
let t: TestServer;
let workDir: string;
let kubectl: Kubectl;
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** `openssl req` output for a new key of the given kind. */
function opensslCsr(newkey: string[], subject = '/CN=alice/O=dev'): string {
  const r = spawnSync(
    'openssl',
    ['req', '-new', ...newkey, '-nodes', '-keyout', '/dev/null', '-subj', subject],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

function selfSignedCertificate(): string {
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      '/dev/null',
      '-subj',
      '/CN=alice',
      '-days',
      '1',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

function csrManifest(name: string, pem: string, extra = ''): string {
  return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${name}}
spec:
  request: ${b64(pem)}
  signerName: example.com/team-ca
  usages: [digital signature, client auth]
  username: mallory
  groups: [system:masters]
${extra}`;
}

describe('CertificateSigningRequests through kubectl', { skip }, () => {
  before(async () => {
    t = await startTestServer();
    workDir = await mkdtemp(join(tmpdir(), 'certkit-csr-'));
    kubectl = kubectlFor(
      { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') },
      workDir,
    );
  });
  after(async () => {
    await t?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('records who asked, prints kubectl columns, and approves with kubectl certificate approve', async () => {
    const pem = opensslCsr(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);
    await kubectl.ok(
      'create',
      '-f',
      await kubectl.manifest(csrManifest('alice', pem, '  expirationSeconds: 86400')),
    );
    const csr = JSON.parse(await kubectl.ok('get', 'csr', 'alice', '-o', 'json'));
    // The requester is the server's to say: the test server's admin token, not what the client wrote.
    assert.equal(csr.spec.username, 'certkit-admin');
    assert.ok(csr.spec.groups.includes('system:masters'));
    assert.ok(csr.spec.groups.includes('system:authenticated'));
    assert.deepEqual(csr.status, {});
    const [pending] = tableRecords(await kubectl.ok('get', 'csr', 'alice'));
    assert.deepEqual(
      { ...pending, AGE: undefined },
      {
        NAME: 'alice',
        AGE: undefined,
        SIGNERNAME: 'example.com/team-ca',
        REQUESTOR: 'certkit-admin',
        REQUESTEDDURATION: '24h',
        CONDITION: 'Pending',
      },
    );

    assert.match(
      await kubectl.ok('certificate', 'approve', 'alice'),
      /certificatesigningrequest\.certificates\.k8s\.io\/alice approved/,
    );
    const approved = JSON.parse(await kubectl.ok('get', 'csr', 'alice', '-o', 'json'));
    const [condition] = approved.status.conditions;
    assert.equal(condition.type, 'Approved');
    assert.equal(condition.status, 'True');
    assert.equal(condition.reason, 'KubectlApprove');
    assert.match(condition.lastUpdateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(condition.lastTransitionTime, /^\d{4}-\d\d-\d\dT/);
    assert.equal(tableRecords(await kubectl.ok('get', 'csr', 'alice'))[0].CONDITION, 'Approved');

    // A signer writes the certificate through status, once; the approval cannot be touched there.
    const certificate = b64(selfSignedCertificate());
    const issued = await t.fetch('PUT', `${CSRS}/alice/status`, {
      body: { ...approved, status: { ...approved.status, certificate } },
    });
    assert.equal(issued.status, 200, issued.text);
    assert.equal(tableRecords(await kubectl.ok('get', 'csr', 'alice'))[0].CONDITION, 'Approved,Issued');
    const again = await t.fetch('PUT', `${CSRS}/alice/status`, {
      body: { ...issued.json, status: { ...issued.json.status, certificate: b64(selfSignedCertificate()) } },
    });
    assert.equal(again.status, 422);
    assert.match(
      again.json.message,
      /status\.certificate: Forbidden: updates may not modify existing certificate content/,
    );
    const unapprove = await t.fetch('PUT', `${CSRS}/alice/status`, {
      body: { ...issued.json, status: { ...issued.json.status, conditions: [] } },
    });
    assert.equal(unapprove.status, 422);
    assert.match(unapprove.json.message, /updates may not remove a condition of type "Approved"/);
    // The main resource changes metadata only.
    const respec = await t.fetch('PATCH', `${CSRS}/alice`, {
      body: { metadata: { labels: { team: 'dev' } }, spec: { signerName: 'example.com/other' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(respec.status, 200, respec.text);
    assert.equal(respec.json.spec.signerName, 'example.com/team-ca');
    assert.equal(respec.json.metadata.labels.team, 'dev');
  });

  it('denies with kubectl certificate deny, and refuses approving a denied request', async () => {
    await kubectl.ok(
      'create',
      '-f',
      await kubectl.manifest(csrManifest('bob', opensslCsr(['-newkey', 'rsa:2048']))),
    );
    assert.match(
      await kubectl.ok('certificate', 'deny', 'bob'),
      /certificatesigningrequest\.certificates\.k8s\.io\/bob denied/,
    );
    const [row] = tableRecords(await kubectl.ok('get', 'csr', 'bob'));
    assert.equal(row.CONDITION, 'Denied');
    // kubectl refuses to approve a denied request itself; the server refuses it to any client.
    const refusedByKubectl = await kubectl.run('certificate', 'approve', 'bob');
    assert.equal(refusedByKubectl.code, 1);
    assert.match(refusedByKubectl.stderr, /is already Denied/);
    const bob = (await t.fetch('GET', `${CSRS}/bob`)).json;
    const approveDenied = await t.fetch('PUT', `${CSRS}/bob/approval`, {
      body: {
        ...bob,
        status: { conditions: [...bob.status.conditions, { type: 'Approved', status: 'True' }] },
      },
    });
    assert.equal(approveDenied.status, 422);
    assert.match(
      approveDenied.json.message,
      /status\.conditions\[1\]\.type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive/,
    );
    // Approval conditions are written through approval only: a status write cannot add them.
    await kubectl.ok(
      'create',
      '-f',
      await kubectl.manifest(csrManifest('carol', opensslCsr(['-newkey', 'ed25519']))),
    );
    const carol = (await t.fetch('GET', `${CSRS}/carol`)).json;
    const sneaky = await t.fetch('PUT', `${CSRS}/carol/status`, {
      body: { ...carol, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Sneaky' }] } },
    });
    assert.equal(sneaky.status, 422);
    assert.match(
      sneaky.json.message,
      /status\.conditions: Forbidden: updates may not add a condition of type "Approved"/,
    );
    const failed = await t.fetch('PUT', `${CSRS}/carol/status`, {
      body: { ...carol, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'SignerError' }] } },
    });
    assert.equal(failed.status, 200, failed.text);
    assert.equal(tableRecords(await kubectl.ok('get', 'csr', 'carol'))[0].CONDITION, 'Pending,Failed');
    const falseApproval = await t.fetch('PUT', `${CSRS}/carol/approval`, {
      body: {
        ...failed.json,
        status: { conditions: [...failed.json.status.conditions, { type: 'Approved', status: 'False' }] },
      },
    });
    assert.equal(falseApproval.status, 422);
    assert.match(
      falseApproval.json.message,
      /status\.conditions\[1\]\.status: Unsupported value: "False": supported values: "True"/,
    );
  });

  it('refuses requests that are not a signed PEM CSR, and missing or malformed fields, with 422', async () => {
    const good = opensslCsr(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);
    const spec = { request: b64(good), signerName: 'example.com/team-ca', usages: ['client auth'] };
    const cases: { spec: Record<string, unknown>; field: string; message: RegExp }[] = [
      {
        spec: { ...spec, request: b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n') },
        field: 'spec.request',
        message:
          /spec\.request: Invalid value: \[\]byte\{0x2d, 0x2d, .*\}: PEM block type must be CERTIFICATE REQUEST/,
      },
      {
        // One byte of the signature changed: parsed, but not signed by its key.
        spec: { ...spec, request: b64(tamper(good)) },
        field: 'spec.request',
        message: /spec\.request: Invalid value: .*: x509: ECDSA verification failure/,
      },
      {
        spec: { ...spec, signerName: undefined },
        field: 'spec.signerName',
        message: /spec\.signerName: Required value/,
      },
      {
        spec: { ...spec, signerName: 'team-ca' },
        field: 'spec.signerName',
        message: /must be a fully qualified domain and path of the form 'example\.com\/signer-name'/,
      },
      { spec: { ...spec, usages: [] }, field: 'spec.usages', message: /spec\.usages: Required value/ },
      {
        spec: { ...spec, usages: ['client auth', 'world domination'] },
        field: 'spec.usages[1]',
        message: /spec\.usages\[1\]: Unsupported value: "world domination"/,
      },
      {
        spec: { ...spec, expirationSeconds: 60 },
        field: 'spec.expirationSeconds',
        message: /may not specify a duration less than 600 seconds \(10 minutes\)/,
      },
    ];
    for (const c of cases) {
      const r = await t.fetch('POST', CSRS, { body: { metadata: { name: 'bad' }, spec: c.spec } });
      assert.equal(r.status, 422, `${c.field}: ${r.text}`);
      assert.ok(
        r.json.details.causes.some((cause: { field: string }) => cause.field === c.field),
        `${c.field}: ${r.text}`,
      );
      assert.match(r.json.message, c.message);
    }
    const viaKubectl = await kubectl.run(
      'create',
      '-f',
      await kubectl.manifest(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: no-signer}
spec: {request: ${b64(good)}, usages: [client auth]}
`),
    );
    assert.equal(viaKubectl.code, 1);
    assert.match(
      viaKubectl.stderr,
      /The CertificateSigningRequest "no-signer" is invalid: spec\.signerName: Required value/,
    );
  });
});

describe(
  'CertificateSigningRequests: approve and sign are per signer (CertificateApproval, CertificateSigning)',
  { skip },
  () => {
    let admin: Kubectl;
    let carol: Kubectl;

    before(async () => {
      t = await startTestServer({
        tokens: new Map([['carol-token', { name: 'carol', uid: 'c-1', groups: [] }]]),
      });
      workDir = await mkdtemp(join(tmpdir(), 'certkit-csr-signers-'));
      const env = { ...process.env, KUBECONFIG: t.kubeconfigPath, KUBECACHEDIR: join(workDir, 'cache') };
      admin = kubectlFor(env, workDir);
      const k = kubectlFor(env, workDir);
      carol = {
        ...k,
        run: (...args) => k.run('--token', 'carol-token', ...args),
        ok: (...args) => k.ok('--token', 'carol-token', ...args),
      };
      // Carol may read CSRs and write both subresources: what is left to decide is the signer verbs.
      await admin.ok(
        'create',
        'clusterrole',
        'csr-writer',
        '--verb=get,list,watch',
        '--resource=certificatesigningrequests',
      );
      await admin.ok(
        'patch',
        'clusterrole',
        'csr-writer',
        '--type=json',
        '-p',
        JSON.stringify([
          {
            op: 'add',
            path: '/rules/-',
            value: {
              apiGroups: ['certificates.k8s.io'],
              resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'],
              verbs: ['update'],
            },
          },
        ]),
      );
      await admin.ok(
        'create',
        'clusterrolebinding',
        'carol-csr-writer',
        '--clusterrole=csr-writer',
        '--user=carol',
      );
    });
    after(async () => {
      await t?.close();
      if (workDir) await rm(workDir, { recursive: true, force: true });
    });

    /** A ClusterRole with one verb on one signer, bound to carol (kubectl create clusterrole wants a served resource). */
    async function grantCarol(name: string, verb: string, signer: string): Promise<void> {
      await admin.ok(
        'apply',
        '-f',
        await admin.manifest(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${name}}
rules:
  - {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: ['${signer}'], verbs: [${verb}]}
`),
      );
      await admin.ok('create', 'clusterrolebinding', name, `--clusterrole=${name}`, '--user=carol');
    }

    /** Waits until RBAC's index lets carol use `verb` on `signer`, asked with a SubjectAccessReview. */
    async function eventuallyCarolMay(verb: string, signer: string): Promise<void> {
      const review = await admin.manifest(`apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: carol
  resourceAttributes: {group: certificates.k8s.io, resource: signers, verb: ${verb}, name: '${signer}'}
`);
      for (let i = 0; i < 100; i++) {
        const answer = JSON.parse(await admin.ok('create', '-f', review, '-o', 'json'));
        if (answer.status.allowed) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.fail(`carol never allowed to ${verb} ${signer}`);
    }

    /** Waits until RBAC's index has the binding: kube's informers lag the same way. */
    async function eventuallyAllowed(k: Kubectl, ...args: string[]): Promise<void> {
      for (let i = 0; i < 100; i++) {
        const r = await k.run('auth', 'can-i', ...args);
        if (r.code === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.fail(`never allowed: ${args.join(' ')}`);
    }

    it('refuses kubectl certificate approve without approve on the signer, allows it with approve on <domain>/*', async () => {
      const pem = opensslCsr(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);
      await admin.ok('create', '-f', await admin.manifest(csrManifest('approve-me', pem)));
      await eventuallyAllowed(carol, 'update', 'certificatesigningrequests', '--subresource=approval');

      const refused = await carol.run('certificate', 'approve', 'approve-me');
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /certificatesigningrequests\.certificates\.k8s\.io "approve-me" is forbidden: user not permitted to approve requests with signerName "example\.com\/team-ca"/,
      );
      assert.equal(tableRecords(await admin.ok('get', 'csr', 'approve-me'))[0].CONDITION, 'Pending');

      // Approval of another domain's signers grants nothing here.
      await grantCarol('approve-other', 'approve', 'other.example.org/*');
      await eventuallyCarolMay('approve', 'other.example.org/*');
      assert.equal((await carol.run('certificate', 'approve', 'approve-me')).code, 1);

      await grantCarol('approve-example', 'approve', 'example.com/*');
      await eventuallyCarolMay('approve', 'example.com/*');
      assert.match(await carol.ok('certificate', 'approve', 'approve-me'), /approve-me approved/);
      assert.equal(tableRecords(await admin.ok('get', 'csr', 'approve-me'))[0].CONDITION, 'Approved');
    });

    it('refuses writing status.certificate without sign on the signer; other status writes need no sign', async () => {
      const pem = opensslCsr(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);
      await admin.ok('create', '-f', await admin.manifest(csrManifest('sign-me', pem)));
      await admin.ok('certificate', 'approve', 'sign-me');
      const stored = JSON.parse(await admin.ok('get', 'csr', 'sign-me', '-o', 'json'));
      const path = `${CSRS}/sign-me/status`;
      const put = async (k: Kubectl, status: object) =>
        k.run('replace', '--raw', path, '-f', await k.manifest(JSON.stringify({ ...stored, status })));

      // A condition of the signer's own, without a certificate: no sign needed.
      const noted = await put(carol, {
        ...stored.status,
        conditions: [...stored.status.conditions, { type: 'Reviewed', status: 'True', reason: 'Looked' }],
      });
      assert.equal(noted.code, 0, noted.stderr);
      Object.assign(stored, JSON.parse(noted.stdout));

      const certificate = b64(selfSignedCertificate());
      const refused = await put(carol, { ...stored.status, certificate });
      assert.notEqual(refused.code, 0);
      assert.match(
        refused.stderr,
        /user not permitted to sign requests with signerName "example\.com\/team-ca"/,
      );
      assert.ok(!JSON.parse(await admin.ok('get', 'csr', 'sign-me', '-o', 'json')).status.certificate);

      await grantCarol('sign-team-ca', 'sign', 'example.com/team-ca');
      await eventuallyCarolMay('sign', 'example.com/team-ca');
      const signed = await put(carol, { ...stored.status, certificate });
      assert.equal(signed.code, 0, signed.stderr);
      assert.equal(tableRecords(await admin.ok('get', 'csr', 'sign-me'))[0].CONDITION, 'Approved,Issued');
    });
  },
);

/** The CSR with the last byte of its signature flipped. */
function tamper(pem: string): string {
  const body = pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  const der = Buffer.from(body, 'base64');
  der[der.length - 1] ^= 0x01;
  const lines = der.toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN CERTIFICATE REQUEST-----\n${lines.join('\n')}\n-----END CERTIFICATE REQUEST-----\n`;
}
