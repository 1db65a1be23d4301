/**
 * The controller and cert-manager's admission on bad input, end to end on the embedded API server with
 * admission wired as `certkit up` wires it and every controller running (scoped to one namespace):
 *
 * - a CA issuer whose CA certificate has expired is not Ready, and its Certificates are issued as soon as
 *   the CA Secret is fixed, well before any backoff; a CA not valid yet becomes Ready at its notBefore and a
 *   valid one stops being Ready at its notAfter, with no event to prompt either;
 * - private key sizes no key can have are refused, through kubectl and the client;
 * - spec.nameConstraints reaches the issued CA certificate (read back with openssl) and refuses to sit on a
 *   leaf;
 * - a CertificateRequest's Approved and Denied conditions are refused when False, when changed once set and
 *   when both are set, through the status subresource (kubectl and the client); the main resource ignores
 *   status as kube-apiserver does; approving through status still works.
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type KubeObject, type StatusError } from '@certkit/apimachinery';
import type { ResourceClient } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { kubectlFor, kubectlSkip, type Kubectl } from '@certkit/testenv/kubectl/kubectl';
import type { Certificate, CertificateRequest, CertificateSpec } from '../api/types.ts';
import { opensslUnavailable, runOpenssl } from '@certkit/testenv/conformance/openssl';
import { buildCertificateRequest, generatePrivateKey, parseCertificate } from '../pki/index.ts';
import { DAY, rootCa } from '@certkit/testenv/pki/ca';
import {
  certificateRequest,
  condition,
  eventually,
  type Harness,
  issuers,
  requests,
  secrets,
  startHarness,
  tlsSecret,
} from '@certkit/testenv/controllers/certificaterequests-harness';
import { certificatesRef } from './refs.ts';

/** Where the controllers run. */
const ns = 'apps';
/** Where nothing runs: requests there are approved or denied by hand only. */
const manual = 'manual';

let h: Harness;
let certs: ResourceClient<Certificate>;
let kubectl: Kubectl | undefined;
let workDir: string;

before(async () => {
  h = await startHarness({ namespaces: [ns, manual], admission: true, certificates: true, namespace: ns });
  certs = h.admin.resource<Certificate>(certificatesRef);
  workDir = await mkdtemp(join(tmpdir(), 'certkit-bad-input-'));
  if (!kubectlSkip) kubectl = kubectlFor({ ...process.env, KUBECONFIG: h.server.kubeconfigPath }, workDir);
  await issuers(h).create(ns, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'selfsigned', namespace: ns },
    spec: { selfSigned: {} },
  });
});

after(async () => {
  await h?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

function caIssuer(name: string, secretName: string) {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name, namespace: ns },
    spec: { ca: { secretName } },
  };
}

function certificate(name: string, spec: Partial<CertificateSpec>): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: ns },
    spec: { secretName: `${name}-tls`, issuerRef: { name: 'selfsigned' }, ...spec },
  };
}

/**
 * The Issuer's Ready condition once it has `status` (and `reason`, when given: before its CA Secret reaches the
 * controller's cache an Issuer is briefly not Ready for another reason, ErrGetKeyPair).
 */
function issuerReady(name: string, status: 'True' | 'False', timeoutMs = 10_000, reason?: string) {
  return eventually(
    async () => {
      const ready = condition(await issuers(h).get(ns, name), 'Ready');
      return ready?.status === status && (reason === undefined || ready.reason === reason)
        ? ready
        : undefined;
    },
    `Issuer ${name} Ready=${status}${reason ? ` (${reason})` : ''}`,
    timeoutMs,
  );
}

/** The Certificate once Ready=True with no issuance in progress, at `minRevision` or later. */
function certificateIssued(name: string, minRevision = 1, timeoutMs = 15_000) {
  return eventually(
    async () => {
      const cert = await certs.get(ns, name);
      const done =
        condition(cert, 'Ready')?.status === 'True' &&
        !condition(cert, 'Issuing') &&
        (cert.status?.revision ?? 0) >= minRevision;
      return done ? cert : undefined;
    },
    `Certificate ${name} issued at revision ${minRevision}`,
    timeoutMs,
  );
}

const decode = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString();
const rfc3339 = (date: Date) => `${date.toISOString().slice(0, 19)}Z`;

/** The 422 a write got, or a failure when it was admitted. */
async function refused(write: Promise<unknown>): Promise<StatusError> {
  try {
    await write;
  } catch (err) {
    const status = err as StatusError;
    assert.equal(status.code, 422, String(err));
    return status;
  }
  assert.fail('the write was admitted');
}

const causes = (err: StatusError) =>
  (err.status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`).sort();

describe('CA issuer with an expired or not yet valid CA certificate', () => {
  it('is Ready False with ErrInvalidKeyPair; fixing the Secret issues the waiting Certificate within seconds', async () => {
    const expired = await rootCa({ algorithm: 'ECDSA' }, DAY, new Date(Date.now() - 2 * DAY));
    const notAfter = parseCertificate(expired.certPem).notAfter;
    await secrets(h).create(ns, tlsSecret(ns, 'expired-ca', { certPem: expired.certPem, key: expired.key }));
    await issuers(h).create(ns, caIssuer('expired', 'expired-ca'));
    const ready = await issuerReady('expired', 'False', 10_000, 'ErrInvalidKeyPair');
    assert.equal(ready.reason, 'ErrInvalidKeyPair');
    assert.equal(
      ready.message,
      `Error getting keypair for CA issuer: the CA certificate expired at ${rfc3339(notAfter)}`,
    );

    await certs.create(
      ns,
      certificate('behind-expired', { commonName: 'a.example', issuerRef: { name: 'expired' } }),
    );
    // Its request waits on the issuer instead of failing, so the Certificate is not put into backoff.
    const waiting = await eventually(async () => {
      const crs = (await requests(h).list(ns)).items.filter(
        (cr) => cr.metadata?.annotations?.['cert-manager.io/certificate-name'] === 'behind-expired',
      );
      const cr = crs[0];
      return cr && condition(cr, 'Ready')?.reason === 'Pending' ? cr : undefined;
    }, 'the request Pending');
    assert.equal(
      condition(waiting, 'Ready')?.message,
      'Referenced issuer does not have a Ready status condition',
    );
    // Past the signer's first retry (5 s) would prove nothing; a short wait shows it neither fails nor issues.
    await sleep(500);
    const still = await certs.get(ns, 'behind-expired');
    assert.equal(still.status?.lastFailureTime, undefined, 'no failure recorded');
    assert.equal(still.status?.failedIssuanceAttempts, undefined);
    assert.notEqual(condition(still, 'Ready')?.status, 'True');

    const good = await rootCa();
    const current = (await secrets(h).get(ns, 'expired-ca')) as Secret & KubeObject;
    const fixedAt = Date.now();
    await secrets(h).update({
      ...current,
      data: tlsSecret(ns, 'expired-ca', { certPem: good.certPem, key: good.key }).data,
    } as never);
    await issuerReady('expired', 'True', 3_000);
    const cert = await certificateIssued('behind-expired', 1, 5_000);
    const elapsed = Date.now() - fixedAt;
    // The signer's backoff starts at 5 s and the Certificate's failure backoff at 1 h.
    assert.ok(elapsed < 3_000, `issued ${elapsed} ms after the Secret was fixed`);
    assert.equal(cert.status?.failedIssuanceAttempts, undefined);
    const tlsCrt = decode(((await secrets(h).get(ns, 'behind-expired-tls')) as Secret).data?.['tls.crt']);
    assert.equal(parseCertificate(tlsCrt).issuer.commonName, 'certkit test root');
  });

  it('leaves a request Pending when the CA has expired under a Ready issuer, and signs it once the Secret is fixed', async () => {
    const expired = await rootCa({ algorithm: 'ECDSA' }, DAY, new Date(Date.now() - 2 * DAY));
    await secrets(h).create(ns, tlsSecret(ns, 'stale-ca', { certPem: expired.certPem, key: expired.key }));
    await issuers(h).create(ns, caIssuer('stale', 'stale-ca'));
    await issuerReady('stale', 'False', 10_000, 'ErrInvalidKeyPair');
    // The issuer as it looked before its CA expired: Ready, for its generation. (Its next check is a backoff
    // away; nothing else makes it look again.) Requests signed meanwhile meet the expired CA in the signer.
    const issuer = await issuers(h).get(ns, 'stale');
    await issuers(h).update(
      {
        ...issuer,
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KeyPairVerified',
              message: 'Signing CA verified',
              observedGeneration: issuer.metadata?.generation,
              lastTransitionTime: rfc3339(new Date()),
            },
          ],
        },
      },
      { subresource: 'status' },
    );
    const csrPem = await buildCertificateRequest(
      { commonName: 'stale.example' },
      await generatePrivateKey({ algorithm: 'ECDSA' }),
    );
    await requests(h).create(ns, certificateRequest(ns, 'under-stale', csrPem, { name: 'stale' }));
    const pending = await eventually(async () => {
      const ready = condition(await requests(h).get(ns, 'under-stale'), 'Ready');
      return ready?.reason === 'Pending' ? ready : undefined;
    }, 'under-stale Pending');
    assert.match(
      pending.message!,
      /^Signing CA keypair in secret apps\/stale-ca cannot sign: the CA certificate expired at /,
    );

    // Let the signer's quick retries (after its own writes) pass: from here its next retry is 5 s away.
    await sleep(500);
    // A valid CA in the Secret: the issuer stays Ready (no readiness change to wake anyone), so it is the
    // CA Secret's own event that brings the request back, well before the signer's retry.
    const good = await rootCa();
    const current = (await secrets(h).get(ns, 'stale-ca')) as Secret & KubeObject;
    const fixedAt = Date.now();
    await secrets(h).update({
      ...current,
      data: tlsSecret(ns, 'stale-ca', { certPem: good.certPem, key: good.key }).data,
    } as never);
    await eventually(
      async () => {
        const ready = condition(await requests(h).get(ns, 'under-stale'), 'Ready');
        return ready?.reason === 'Issued' ? ready : undefined;
      },
      'under-stale Issued',
      4_000,
    );
    const elapsed = Date.now() - fixedAt;
    assert.ok(elapsed < 2_500, `issued ${elapsed} ms after the Secret was fixed`);
  });

  it('turns Ready at the CA certificate notBefore, and not Ready at its notAfter, with no event to prompt it', async () => {
    // Seconds ahead, so that the not-yet-valid state is seen even on a loaded machine.
    const startsAt = new Date(Date.now() + 4_000);
    const early = await rootCa({ algorithm: 'ECDSA' }, DAY, startsAt);
    await secrets(h).create(ns, tlsSecret(ns, 'future-ca', { certPem: early.certPem, key: early.key }));
    await issuers(h).create(ns, caIssuer('future', 'future-ca'));
    const notYet = await issuerReady('future', 'False', 10_000, 'ErrInvalidKeyPair');
    assert.equal(notYet.reason, 'ErrInvalidKeyPair');
    assert.equal(
      notYet.message,
      `Error getting keypair for CA issuer: the CA certificate is not valid before ${rfc3339(parseCertificate(early.certPem).notBefore)}`,
    );
    await issuerReady('future', 'True', 10_000);
    assert.ok(Date.now() >= startsAt.getTime() - 1_000, 'Ready no earlier than notBefore');

    // A CA that expires 4 s from now: Ready until then, then ErrInvalidKeyPair without any write to it.
    const endsAt = Date.now() + 4_000;
    const ending = await rootCa({ algorithm: 'ECDSA' }, DAY, new Date(endsAt - DAY));
    await secrets(h).create(ns, tlsSecret(ns, 'ending-ca', { certPem: ending.certPem, key: ending.key }));
    await issuers(h).create(ns, caIssuer('ending', 'ending-ca'));
    await issuerReady('ending', 'True');
    const expired = await issuerReady('ending', 'False', 10_000);
    assert.ok(Date.now() >= endsAt - 1_000, 'not Ready only once expired');
    assert.equal(expired.reason, 'ErrInvalidKeyPair');
    assert.match(expired.message!, /the CA certificate expired at /);
  });
});

describe('private key sizes', () => {
  const refusals: [string, CertificateSpec['privateKey'], string][] = [
    [
      'rsa-minus-one',
      { size: -1 },
      'spec.privateKey.size: Invalid value: -1: must be between 2048 and 8192 for rsa keyAlgorithm',
    ],
    ['rsa-1024', { algorithm: 'RSA', size: 1024 }, 'must be between 2048 and 8192 for rsa keyAlgorithm'],
    ['rsa-16384', { algorithm: 'RSA', size: 16384 }, 'must be between 2048 and 8192 for rsa keyAlgorithm'],
    [
      'ecdsa-300',
      { algorithm: 'ECDSA', size: 300 },
      'Unsupported value: 300: supported values: "256", "384", "521"',
    ],
    [
      'ecdsa-minus',
      { algorithm: 'ECDSA', size: -256 },
      'Unsupported value: -256: supported values: "256", "384", "521"',
    ],
    ['ed25519-minus', { algorithm: 'Ed25519', size: -1 }, 'Invalid value: -1: must not be negative'],
  ];

  it('refuses sizes no key can have through the client, with the field', async () => {
    for (const [name, privateKey, message] of refusals) {
      const err = await refused(certs.create(ns, certificate(name, { commonName: 'k.example', privateKey })));
      assert.deepEqual(
        (err.status.details?.causes ?? []).map((c) => c.field),
        ['spec.privateKey.size'],
        name,
      );
      assert.ok(err.message.includes(message), `${name}: ${err.message}`);
    }
  });

  it('refuses privateKey.size -1 through kubectl apply', { skip: kubectlSkip }, async () => {
    const path = await kubectl!.manifest(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: minus-one
  namespace: ${ns}
spec:
  secretName: minus-one-tls
  commonName: minus-one.example
  issuerRef:
    name: selfsigned
  privateKey:
    size: -1
`);
    const result = await kubectl!.run('apply', '-f', path);
    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /spec\.privateKey\.size: Invalid value: -1: must be between 2048 and 8192 for rsa keyAlgorithm/,
    );
  });

  it('still takes the sizes cert-manager takes', async () => {
    await certs.create(
      ns,
      certificate('ecdsa-384', { commonName: 'e.example', privateKey: { algorithm: 'ECDSA', size: 384 } }),
    );
    await certs.create(
      ns,
      certificate('ed25519-sized', {
        commonName: 'd.example',
        privateKey: { algorithm: 'Ed25519', size: 1 },
      }),
    );
  });
});

describe('spec.nameConstraints', () => {
  /** `openssl x509 -text` of the Certificate's tls.crt, or undefined when openssl is not installed. */
  async function opensslText(name: string): Promise<string | undefined> {
    const reason = opensslUnavailable();
    if (reason) {
      console.log(`# openssl cross-check skipped: ${reason}`);
      return undefined;
    }
    const secret = (await secrets(h).get(ns, `${name}-tls`)) as Secret;
    const result = runOpenssl((dir) => ['x509', '-noout', '-text', '-in', join(dir, 'c.pem')], {
      'c.pem': decode(secret.data?.['tls.crt']),
    });
    assert.ok(result.ok, result.output);
    return result.output;
  }

  /** The Permitted and Excluded parts of openssl's Name Constraints section. */
  function constraintSections(text: string) {
    const section = text.slice(text.indexOf('X509v3 Name Constraints'));
    const end = section.search(/\n {12}X509v3 (?!Name Constraints)|\n {4}Signature Algorithm/);
    const body = end > 0 ? section.slice(0, end) : section;
    const excludedAt = body.indexOf('Excluded:');
    return {
      header: body.split('\n')[0],
      permitted: excludedAt > 0 ? body.slice(0, excludedAt) : body,
      excluded: excludedAt > 0 ? body.slice(excludedAt) : '',
    };
  }

  it('encodes them into the issued CA as a critical extension, then re-issues when they change', async () => {
    await certs.create(
      ns,
      certificate('constrained-ca', {
        commonName: 'constrained CA',
        isCA: true,
        nameConstraints: {
          critical: true,
          permitted: {
            dnsDomains: ['example.com'],
            ipRanges: ['10.20.0.0/16', '2001:db8::/32'],
            emailAddresses: ['example.com'],
            uriDomains: ['.example.com'],
          },
          excluded: { dnsDomains: ['secret.example.com'], ipRanges: ['10.20.30.0/24'] },
        },
      }),
    );
    await certificateIssued('constrained-ca');
    const text = await opensslText('constrained-ca');
    if (text !== undefined) {
      const { header, permitted, excluded } = constraintSections(text);
      assert.match(header, /X509v3 Name Constraints: critical/);
      for (const entry of [
        'DNS:example.com',
        'IP:10.20.0.0/255.255.0.0',
        'IP:2001:DB8:0:0:0:0:0:0/FFFF:FFFF:0:0:0:0:0:0',
        'email:example.com',
        'URI:.example.com',
      ]) {
        assert.ok(permitted.includes(entry), `Permitted ${entry} in\n${permitted}`);
      }
      for (const entry of ['DNS:secret.example.com', 'IP:10.20.30.0/255.255.255.0']) {
        assert.ok(excluded.includes(entry), `Excluded ${entry} in\n${excluded}`);
      }
    }

    // A change of constraints is a change of what was asked for: a new revision carries the new ones.
    await certs.patch(ns, 'constrained-ca', 'merge', {
      spec: {
        nameConstraints: { critical: false, permitted: { dnsDomains: ['other.example'] }, excluded: null },
      },
    });
    await certificateIssued('constrained-ca', 2);
    const again = await opensslText('constrained-ca');
    if (again !== undefined) {
      const { header, permitted, excluded } = constraintSections(again);
      assert.doesNotMatch(header, /critical/);
      assert.ok(permitted.includes('DNS:other.example'), permitted);
      assert.ok(!permitted.includes('DNS:example.com'), permitted);
      assert.equal(excluded, '');
    }
  });

  it('refuses them on a certificate that is not a CA, and names that are not IA5Strings', async () => {
    const leaf = await refused(
      certs.create(
        ns,
        certificate('constrained-leaf', {
          commonName: 'leaf.example',
          nameConstraints: { permitted: { dnsDomains: ['example.com'] } },
        }),
      ),
    );
    assert.deepEqual(causes(leaf), [
      'spec.nameConstraints: Invalid value: {"permitted":{"dnsDomains":["example.com"]}}: isCA should be true when nameConstraints is set',
    ]);
    const ascii = await refused(
      certs.create(
        ns,
        certificate('constrained-utf8', {
          commonName: 'ca.example',
          isCA: true,
          nameConstraints: { excluded: { dnsDomains: ['bücher.example'], ipRanges: ['10.0.0.0/40'] } },
        }),
      ),
    );
    assert.deepEqual(causes(ascii), [
      'spec.nameConstraints.excluded.dnsDomains[0]: Invalid value: "bücher.example": x509: "bücher.example" cannot be encoded as an IA5String',
      'spec.nameConstraints.excluded.ipRanges[0]: Invalid value: "10.0.0.0/40": invalid CIDR address',
    ]);
  });
});

describe('CertificateRequest approval conditions', () => {
  let csrPem: string;
  before(async () => {
    csrPem = await buildCertificateRequest(
      { commonName: 'manual.example' },
      await generatePrivateKey({ algorithm: 'ECDSA' }),
    );
  });

  const crs = () => requests(h);
  const approval = (type: 'Approved' | 'Denied', status: 'True' | 'False', reason = 'cmctl') => ({
    type,
    status,
    reason,
    message: `set by hand (${reason})`,
    lastTransitionTime: '2026-11-26T00:00:00Z',
  });

  async function fresh(name: string): Promise<CertificateRequest> {
    return crs().create(manual, certificateRequest(manual, name, csrPem, { name: 'nowhere' }));
  }

  /** A status update through the client (PUT …/status) with these conditions. */
  function putStatus(cr: CertificateRequest, conditions: object[]) {
    return crs().update({ ...cr, status: { ...cr.status, conditions } } as CertificateRequest, {
      subresource: 'status',
    });
  }

  it('approves through the status subresource, as cmctl does, and keeps the approval', async () => {
    const cr = await fresh('approve-me');
    const approved = await putStatus(cr, [approval('Approved', 'True')]);
    assert.equal(condition(approved, 'Approved')?.status, 'True');
    // Writing other conditions around an unchanged approval is fine: the signers do it all the time.
    const more = await putStatus(approved, [
      ...approved.status!.conditions!,
      { type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting' },
    ]);
    assert.equal(condition(more, 'Ready')?.reason, 'Pending');
  });

  it('refuses an Approved or Denied condition that is False', async () => {
    const cr = await fresh('false-approval');
    const approvedFalse = await refused(putStatus(cr, [approval('Approved', 'False')]));
    assert.deepEqual(causes(approvedFalse), [
      'status.conditions.Approved: Invalid value: "False": "Approved" condition may only be set to True',
    ]);
    const deniedFalse = await refused(putStatus(cr, [approval('Denied', 'False')]));
    assert.deepEqual(causes(deniedFalse), [
      'status.conditions.Denied: Invalid value: "False": "Denied" condition may only be set to True',
    ]);
    assert.equal((await crs().get(manual, 'false-approval')).status?.conditions, undefined);
  });

  it('refuses a change to an approval once set, and Approved together with Denied', async () => {
    const cr = await fresh('set-once');
    const approved = await putStatus(cr, [approval('Approved', 'True')]);

    const reworded = await refused(putStatus(approved, [approval('Approved', 'True', 'someone-else')]));
    assert.deepEqual(causes(reworded), [
      "status.conditions: Forbidden: 'Approved' condition may not be modified once set",
    ]);
    const removed = await refused(putStatus(approved, []));
    assert.deepEqual(causes(removed), [
      "status.conditions: Forbidden: 'Approved' condition may not be modified once set",
    ]);
    const both = await refused(
      putStatus(approved, [approval('Approved', 'True'), approval('Denied', 'True')]),
    );
    assert.deepEqual(causes(both), [
      "status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist",
    ]);

    const denied = await putStatus(await fresh('denied-once'), [approval('Denied', 'True')]);
    const undenied = await refused(putStatus(denied, [approval('Denied', 'False')]));
    assert.deepEqual(
      causes(undenied),
      [
        "status.conditions: Forbidden: 'Denied' condition may not be modified once set",
        'status.conditions.Denied: Invalid value: "False": "Denied" condition may only be set to True',
      ].sort(),
    );
    const stored = await crs().get(manual, 'set-once');
    assert.deepEqual(stored.status?.conditions, [approval('Approved', 'True')]);
  });

  it('refuses them through kubectl patch --subresource=status', { skip: kubectlSkip }, async () => {
    await putStatus(await fresh('kubectl-approved'), [approval('Approved', 'True')]);
    const patch = JSON.stringify({ status: { conditions: [approval('Approved', 'False')] } });
    const result = await kubectl!.run(
      'patch',
      'certificaterequest',
      'kubectl-approved',
      '-n',
      manual,
      '--subresource=status',
      '--type=merge',
      '-p',
      patch,
    );
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /'Approved' condition may not be modified once set/);
    assert.match(result.stderr, /"Approved" condition may only be set to True/);
  });

  it('ignores status sent to the main resource, as kube-apiserver does with a status subresource', async () => {
    const approved = await putStatus(await fresh('main-resource'), [approval('Approved', 'True')]);
    const updated = await crs().update({
      ...approved,
      metadata: { ...approved.metadata, labels: { touched: 'yes' } },
      status: { conditions: [approval('Approved', 'False'), approval('Denied', 'True')] },
    } as CertificateRequest);
    assert.equal(updated.metadata?.labels?.touched, 'yes');
    assert.deepEqual(updated.status?.conditions, [approval('Approved', 'True')]);
    const created = await crs().create(manual, {
      ...certificateRequest(manual, 'created-with-status', csrPem, { name: 'nowhere' }),
      status: { conditions: [approval('Denied', 'False')] },
    } as CertificateRequest);
    assert.equal(created.status?.conditions, undefined);
  });

  it('lets the controllers approve, sign and write status as before', async () => {
    // Every issuance above went through the approver and a signer; one more, on the SelfSigned issuer.
    await certs.create(ns, certificate('approved-flow', { commonName: 'flow.example' }));
    await certificateIssued('approved-flow');
    const cr = (await requests(h).list(ns)).items.find(
      (r) => r.metadata?.annotations?.['cert-manager.io/certificate-name'] === 'approved-flow',
    )!;
    assert.equal(condition(cr, 'Approved')?.status, 'True');
    assert.equal(condition(cr, 'Ready')?.reason, 'Issued');
  });
});
