/**
 * The approver and the SelfSigned and CA signers against the real embedded API server, with the issuer
 * controllers running too (signers wait for Ready issuers). The approver is held back at first, so a request
 * can be denied before anyone approves it.
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@certkit/apimachinery';
import { builtins } from '@certkit/runtime';
import type { CertificateRequest } from '../../api/types.ts';
import { buildCertificateRequest, generatePrivateKey, parseCertificate } from '../../pki/index.ts';
import { issue, opensslUnavailable, opensslVerify, rootCa } from '@certkit/testenv/pki/ca';
import { APPROVED_MESSAGE, APPROVED_REASON } from './approver.ts';
import { READY_MESSAGE } from './draft.ts';
import {
  certificateRequest,
  clusterIssuers,
  condition,
  eventsFor,
  eventually,
  type Harness,
  issuers,
  requests,
  secretGets,
  secrets,
  startHarness,
  tlsSecret,
} from '@certkit/testenv/controllers/certificaterequests-harness';

const ns = 'team';
const clusterNs = 'cert-manager';
const FAO = { 'controller.cert-manager.io/fao': 'true' };

let h: Harness;

before(async () => {
  h = await startHarness({
    namespaces: [ns, clusterNs],
    clusterResourceNamespace: clusterNs,
    holdApprover: true,
  });
});

after(async () => {
  await h?.close();
});

const decode = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString();

async function getRequest(name: string, namespace = ns): Promise<CertificateRequest> {
  return requests(h).get(namespace, name);
}

/** The request once its Ready condition has `reason`. */
function readyWith(name: string, reason: string, namespace = ns) {
  return eventually(async () => {
    const cr = await getRequest(name, namespace);
    return condition(cr, 'Ready')?.reason === reason ? cr : undefined;
  }, `${name} Ready reason ${reason}`);
}

async function waitIssuerReady(kind: 'Issuer' | 'ClusterIssuer', name: string) {
  return eventually(async () => {
    const issuer =
      kind === 'Issuer' ? await issuers(h).get(ns, name) : await clusterIssuers(h).get(undefined, name);
    return condition(issuer, 'Ready')?.status === 'True' ? issuer : undefined;
  }, `${kind} ${name} Ready`);
}

/** A key, a CSR for it and the labelled Secret requestmanager would have written for it. */
async function keyAndCsr(name: string, spec: Parameters<typeof buildCertificateRequest>[0]) {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await buildCertificateRequest(spec, key);
  await secrets(h).create(ns, tlsSecret(ns, `${name}-key`, { key }, FAO));
  return { key, csrPem };
}

/** node:crypto's own chain check: each certificate signed by the next, the last by the root. */
function verifyChain(chainPem: string, rootPem: string) {
  const chain = chainPem
    .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!
    .map((p) => new X509Certificate(p));
  const root = new X509Certificate(rootPem);
  const all = [...chain, root];
  for (let i = 0; i < chain.length; i++) {
    assert.ok(all[i].checkIssued(all[i + 1]), `certificate ${i} issued by the next`);
    assert.ok(all[i].verify(all[i + 1].publicKey), `certificate ${i} signature`);
  }
}

describe('certificaterequests controllers', () => {
  it('never signs a denied request', async () => {
    await issuers(h).create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'self', namespace: ns },
      spec: { selfSigned: {} },
    });
    await waitIssuerReady('Issuer', 'self');
    const { csrPem } = await keyAndCsr('denied', { commonName: 'denied.example.com' });
    await requests(h).create(
      ns,
      certificateRequest(
        ns,
        'denied',
        csrPem,
        { name: 'self' },
        {
          annotations: { 'cert-manager.io/private-key-secret-name': 'denied-key' },
        },
      ),
    );
    // Unapproved: the signer waits.
    await sleep(300);
    assert.equal((await getRequest('denied')).status?.certificate, undefined);

    const cr = await getRequest('denied');
    cr.status = {
      conditions: [
        {
          type: 'Denied',
          status: 'True',
          reason: 'policy',
          message: 'no',
          lastTransitionTime: '2030-01-01T00:00:00Z',
        },
      ],
    };
    await requests(h).update(cr, { subresource: 'status' });
    const denied = await readyWith('denied', 'Denied');
    assert.equal(condition(denied, 'Ready')?.status, 'False');
    assert.equal(
      condition(denied, 'Ready')?.message,
      'The CertificateRequest was denied by an approval controller',
    );
    assert.ok(denied.status?.failureTime);

    h.startApprover();
    await sleep(500);
    const later = await getRequest('denied');
    assert.equal(condition(later, 'Approved'), undefined, 'a denied request is never approved');
    assert.equal(later.status?.certificate, undefined);
    assert.equal(condition(later, 'Ready')?.reason, 'Denied');
  });

  it('approves and self-signs a request with its own private key', async () => {
    const { key, csrPem } = await keyAndCsr('self', {
      commonName: 'self.example.com',
      dnsNames: ['self.example.com'],
    });
    // Every version of the request, to see how many status writes issuance took.
    const abort = new AbortController();
    const versions: CertificateRequest[] = [];
    const watch = await requests(h).watch(ns, {
      fieldSelector: 'metadata.name=self-1',
      signal: abort.signal,
    });
    const watched = (async () => {
      try {
        for await (const event of watch) {
          if (event.type === 'MODIFIED') versions.push(event.object as CertificateRequest);
        }
      } catch {
        // aborted below
      }
    })();
    await requests(h).create(
      ns,
      certificateRequest(
        ns,
        'self-1',
        csrPem,
        { name: 'self', kind: 'Issuer', group: 'cert-manager.io' },
        {
          annotations: { 'cert-manager.io/private-key-secret-name': 'self-key' },
          duration: '2h',
        },
      ),
    );
    const cr = await readyWith('self-1', 'Issued');
    // The watch may deliver the write a moment after a read sees it: wait for it before counting.
    await eventually(
      () => (versions.some((v) => condition(v, 'Ready')?.status === 'True') ? true : undefined),
      'the watch to deliver the issued request',
    );
    abort.abort();
    await watched;
    // The approver hands the request to the signer, which writes the approval along with the certificate.
    assert.deepEqual(
      versions.map((v) => v.status?.conditions?.map((c) => `${c.type}=${c.status}`)),
      [['Approved=True', 'Ready=True']],
    );
    // Its recheck of the hand-off (due 10 s later) is dropped once the approval is written: nothing waits.
    await eventually(
      () => h.approver.queue.delayedLen === 0,
      "the approver's recheck dropped after the approval",
      3000,
    );
    const approved = condition(cr, 'Approved');
    assert.deepEqual(
      [approved?.status, approved?.reason, approved?.message],
      ['True', APPROVED_REASON, APPROVED_MESSAGE],
    );
    assert.deepEqual(
      [condition(cr, 'Ready')?.status, condition(cr, 'Ready')?.message],
      ['True', READY_MESSAGE],
    );
    const certPem = decode(cr.status?.certificate);
    assert.equal(decode(cr.status?.ca), certPem, 'a self-signed certificate is its own CA');
    const cert = parseCertificate(certPem);
    assert.equal(cert.subject.commonName, 'self.example.com');
    assert.deepEqual(cert.dnsNames, ['self.example.com']);
    assert.ok(new X509Certificate(certPem).verify(new X509Certificate(certPem).publicKey));
    assert.ok(new X509Certificate(certPem).checkPrivateKey(key));
    assert.equal(cert.notAfter.getTime() - cert.notBefore.getTime(), 2 * 3600_000);

    // Events are sent after the status write that the test waited for: they may land a moment later.
    await eventually(async () => {
      const events = await eventsFor(h, ns, 'self-1');
      const approvedEvent = events.some(
        (e) => e.reason === 'cert-manager.io' && e.message === APPROVED_MESSAGE,
      );
      const issuedEvent = events.some((e) => e.reason === 'CertificateIssued' && e.message === READY_MESSAGE);
      return approvedEvent && issuedEvent ? events : undefined;
    }, 'the approval and issuance events');
  });

  it("approves a request for another group's issuer only once the cluster serves that kind, and signs nothing", async () => {
    const { csrPem } = await keyAndCsr('foreign', { commonName: 'foreign.example.com' });
    await requests(h).create(
      ns,
      certificateRequest(ns, 'foreign', csrPem, { name: 'x', kind: 'ExternalIssuer', group: 'example.com' }),
    );
    // No such kind is served: no signer of that name exists to approve for (cert-manager's webhook refuses
    // the approval: "referenced signer resource does not exist").
    await sleep(1000);
    assert.equal(condition(await getRequest('foreign'), 'Approved'), undefined);

    // The external issuer's CRD installed, and the request looked at again: the controller's identity
    // (here the admin's) may approve for any signer, so it does.
    await h.admin.resource(builtins.customResourceDefinitions).create(undefined, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'externalissuers.example.com' },
      spec: {
        group: 'example.com',
        names: {
          kind: 'ExternalIssuer',
          plural: 'externalissuers',
          singular: 'externalissuer',
          listKind: 'ExternalIssuerList',
        },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    } as unknown as KubeObject);
    const cr = await eventually(async () => {
      await requests(h).patch(ns, 'foreign', 'merge', {
        metadata: { annotations: { poke: String(Date.now()) } },
      });
      const current = await getRequest('foreign');
      return condition(current, 'Approved') ? current : undefined;
    }, 'the approval of a request for an external issuer');
    assert.equal(condition(cr, 'Approved')?.reason, APPROVED_REASON);
    await sleep(300);
    const later = await getRequest('foreign');
    assert.equal(condition(later, 'Ready'), undefined, 'no in-tree signer answers for an external issuer');
    assert.equal(later.status?.certificate, undefined);
  });

  it('fails a SelfSigned request without the private key annotation', async () => {
    const { csrPem } = await keyAndCsr('noanno', { commonName: 'noanno.example.com' });
    await requests(h).create(ns, certificateRequest(ns, 'noanno', csrPem, { name: 'self' }));
    const cr = await readyWith('noanno', 'Failed');
    assert.match(
      condition(cr, 'Ready')!.message!,
      /Annotation "cert-manager.io\/private-key-secret-name" missing/,
    );
    assert.ok(cr.status?.failureTime);
    const events = await eventually(async () => {
      const list = await eventsFor(h, ns, 'noanno');
      return list.some((e) => e.reason === 'MissingAnnotation') ? list : undefined;
    }, 'MissingAnnotation event');
    assert.equal(events.find((e) => e.reason === 'MissingAnnotation')?.type, 'Warning');
  });

  it('marks a request with an unreadable CSR InvalidRequest, and fails it', async () => {
    await requests(h).create(
      ns,
      certificateRequest(ns, 'garbage', 'not a certificate request', { name: 'self' }),
    );
    const cr = await readyWith('garbage', 'Failed');
    const invalid = condition(cr, 'InvalidRequest');
    assert.equal(invalid?.status, 'True');
    assert.equal(invalid?.reason, 'BadConfig');
    assert.match(invalid!.message!, /spec\.request/);
    assert.equal(cr.status?.certificate, undefined);
  });

  describe('CA issuer', () => {
    let root: Awaited<ReturnType<typeof rootCa>>;

    before(async () => {
      root = await rootCa();
      // Unlabelled, as users create CA Secrets: cached as metadata only, read with a live GET.
      await secrets(h).create(ns, tlsSecret(ns, 'ca-key-pair', { certPem: root.certPem, key: root.key }));
      await issuers(h).create(ns, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: 'ca', namespace: ns },
        spec: { ca: { secretName: 'ca-key-pair' } },
      });
      await waitIssuerReady('Issuer', 'ca');
    });

    it('signs with the CA key pair, in a chain that verifies', async () => {
      const key = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
      const csrPem = await buildCertificateRequest(
        { commonName: 'web.example.com', dnsNames: ['web.example.com'] },
        key,
      );
      await requests(h).create(ns, certificateRequest(ns, 'web-1', csrPem, { name: 'ca' }));
      const cr = await readyWith('web-1', 'Issued');
      const certPem = decode(cr.status?.certificate);
      const caPem = decode(cr.status?.ca);
      assert.equal(
        new X509Certificate(caPem).fingerprint256,
        new X509Certificate(root.certPem).fingerprint256,
      );
      verifyChain(certPem, caPem);
      assert.equal(parseCertificate(certPem).issuer.commonName, 'certkit test root');
      assert.ok(new X509Certificate(certPem).checkPrivateKey(key));
      const notAfter = parseCertificate(certPem).notAfter.getTime();
      assert.ok(
        Math.abs(notAfter - Date.now() - 90 * 24 * 3600_000) < 60_000,
        'duration defaults to 90 days',
      );
    });

    it('passes openssl verify', { skip: opensslUnavailable() }, async () => {
      const cr = await getRequest('web-1');
      const result = opensslVerify(decode(cr.status?.ca), decode(cr.status?.certificate));
      assert.ok(result.ok, result.output);
    });

    it('reads the unlabelled CA Secret with exactly one live GET per request', async () => {
      await sleep(300); // let anything still in flight from earlier tests settle
      const since = h.requests.length;
      const names = ['count-1', 'count-2', 'count-3'];
      for (const name of names) {
        const key = await generatePrivateKey({ algorithm: 'ECDSA' });
        const csrPem = await buildCertificateRequest({ commonName: `${name}.example.com` }, key);
        await requests(h).create(ns, certificateRequest(ns, name, csrPem, { name: 'ca' }));
      }
      for (const name of names) await readyWith(name, 'Issued');
      await sleep(500); // a second signing would show up here
      assert.equal(secretGets(h, since), names.length);
    });

    it('fails a request whose CSR contradicts the request: Failed, SigningError, as cert-manager', async () => {
      const key = await generatePrivateKey({ algorithm: 'ECDSA' });
      // The CSR asks for a CA certificate; the request does not.
      const csrPem = await buildCertificateRequest({ commonName: 'sneaky.example.com', isCA: true }, key);
      await requests(h).create(ns, certificateRequest(ns, 'sneaky', csrPem, { name: 'ca' }, { isCA: false }));
      const cr = await readyWith('sneaky', 'Failed');
      // cert-manager's in-tree signers never set InvalidRequest: Ready=False Failed, and a Warning.
      assert.equal(condition(cr, 'InvalidRequest'), undefined);
      assert.match(
        condition(cr, 'Ready')!.message!,
        /^Error generating certificate template: .*IsCA true does not match expected value false/,
      );
      const warning = await eventually(
        async () => (await eventsFor(h, ns, 'sneaky')).find((e) => e.reason === 'SigningError'),
        'SigningError event',
      );
      assert.equal(warning.type, 'Warning');
      assert.equal(warning.message, condition(cr, 'Ready')!.message);
      assert.equal(cr.status?.certificate, undefined);
    });

    it('signs for a ClusterIssuer with the Secret from the cluster resource namespace', async () => {
      const clusterRoot = await issue({ spec: { commonName: 'cluster root', isCA: true } });
      await secrets(h).create(
        clusterNs,
        tlsSecret(clusterNs, 'root-ca', { certPem: clusterRoot.certPem, key: clusterRoot.key }),
      );
      // A decoy of the same name in the request's namespace must not be used.
      await secrets(h).create(ns, tlsSecret(ns, 'root-ca', { certPem: root.certPem, key: root.key }));
      await clusterIssuers(h).create(undefined, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'ClusterIssuer',
        metadata: { name: 'cluster-ca' },
        spec: { ca: { secretName: 'root-ca' } },
      });
      await waitIssuerReady('ClusterIssuer', 'cluster-ca');
      const key = await generatePrivateKey({ algorithm: 'ECDSA' });
      const csrPem = await buildCertificateRequest({ commonName: 'api.example.com' }, key);
      await requests(h).create(
        ns,
        certificateRequest(ns, 'api-1', csrPem, { name: 'cluster-ca', kind: 'ClusterIssuer' }),
      );
      const cr = await readyWith('api-1', 'Issued');
      assert.equal(parseCertificate(decode(cr.status?.certificate)).issuer.commonName, 'cluster root');
      verifyChain(decode(cr.status?.certificate), clusterRoot.certPem);
    });
  });

  it('waits, Pending, for a missing issuer and signs as soon as it is Ready', async () => {
    const { csrPem } = await keyAndCsr('late', { commonName: 'late.example.com' });
    await requests(h).create(
      ns,
      certificateRequest(
        ns,
        'late',
        csrPem,
        { name: 'late-self' },
        {
          annotations: { 'cert-manager.io/private-key-secret-name': 'late-key' },
        },
      ),
    );
    const pending = await readyWith('late', 'Pending');
    assert.equal(
      condition(pending, 'Ready')?.message,
      'Referenced "Issuer" not found: issuer.cert-manager.io "late-self" not found',
    );
    await sleep(200);
    const created = Date.now();
    await issuers(h).create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'late-self', namespace: ns },
      spec: { selfSigned: {} },
    });
    await readyWith('late', 'Issued');
    // Well inside the 5 s first backoff step: the issuer's events woke the request.
    assert.ok(Date.now() - created < 2_000, `issued after ${Date.now() - created} ms`);
  });
});
