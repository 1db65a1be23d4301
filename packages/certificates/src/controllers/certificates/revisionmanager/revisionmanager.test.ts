/**
 * The revision manager's reconcile, one table row per case of cert-manager's
 * revisionmanager_controller_test.go, on the in-memory client: the Certificate and its requests in, the
 * requests deleted out.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Certificate, CertificateRequest } from '../../../api/types.ts';
import {
  certificate,
  certificateRequest,
  condition,
  FakeEnvironment,
  keyPair,
} from '@certkit/testenv/controllers/fake-environment';
import { revisionManagerReconciler } from './revisionmanager.ts';

let csrPem: string;

before(async () => {
  csrPem = (await keyPair()).csrPem;
});

const ready = (limit?: number): Certificate =>
  certificate(limit === undefined ? {} : { revisionHistoryLimit: limit }, {
    revision: 6,
    conditions: [condition('Ready', 'True', 'Ready')],
  });

/** Requests of the given revisions, owned by the Certificate. */
const revisions =
  (...numbers: number[]) =>
  (cert: Certificate): CertificateRequest[] =>
    numbers.map((n) => certificateRequest(cert, n, csrPem));

interface Row {
  name: string;
  certificate?: () => Certificate;
  requests?: (cert: Certificate) => CertificateRequest[];
  /** The requests deleted, in order. */
  deleted: string[];
}

const rows: Row[] = [
  { name: 'does nothing for a Certificate that does not exist', deleted: [] },
  {
    name: 'does nothing while the Certificate is not Ready=True',
    certificate: () => certificate({}, { revision: 2, conditions: [condition('Ready', 'False', 'Expired')] }),
    requests: revisions(1, 2),
    deleted: [],
  },
  { name: 'does nothing when no requests exist', certificate: () => ready(), deleted: [] },
  {
    name: 'does nothing with requests without a revision, or a malformed one',
    certificate: () => ready(),
    requests: (cert) =>
      ['', 'abc'].map((revision, i) => {
        const cr = certificateRequest(cert, i + 1, csrPem);
        cr.metadata.annotations = {
          ...cr.metadata.annotations,
          'cert-manager.io/certificate-revision': revision,
        };
        return cr;
      }),
    deleted: [],
  },
  {
    name: 'does nothing with requests this Certificate does not own',
    certificate: () => ready(),
    requests: (cert) =>
      revisions(1, 2, 3)(cert).map((cr) => ({ ...cr, metadata: { ...cr.metadata, ownerReferences: [] } })),
    deleted: [],
  },
  {
    name: 'does nothing when the number of revisions is the limit',
    certificate: () => ready(3),
    requests: revisions(4, 5, 6),
    deleted: [],
  },
  {
    name: 'deletes 1 request of 2, the default limit being 1',
    certificate: () => ready(),
    requests: revisions(5, 6),
    deleted: ['web-5'],
  },
  {
    name: 'deletes the 3 oldest of 6 requests with limit 3',
    certificate: () => ready(3),
    requests: revisions(4, 1, 6, 2, 5, 3),
    deleted: ['web-1', 'web-2', 'web-3'],
  },
  {
    name: 'counts only numbered requests against the limit',
    certificate: () => ready(2),
    requests: (cert) => {
      const unnumbered = certificateRequest(cert, 9, csrPem);
      delete unnumbered.metadata.annotations!['cert-manager.io/certificate-revision'];
      unnumbered.metadata.name = 'web-unnumbered';
      return [unnumbered, ...revisions(4, 5, 6)(cert)];
    },
    deleted: ['web-4'],
  },
];

describe('certificates-revision-manager reconcile', () => {
  for (const row of rows) {
    it(row.name, async () => {
      const cert = row.certificate?.();
      const env = await FakeEnvironment.start({
        certificates: cert ? [cert] : [],
        requests: cert && row.requests ? row.requests(cert) : [],
      });
      try {
        await env.reconcile(revisionManagerReconciler(env.ctx));
        assert.deepEqual(
          env.writes(),
          row.deleted.map((name) => `delete certificaterequests.cert-manager.io ${name}`),
        );
      } finally {
        await env.stop();
      }
    });
  }
});
