/**
 * The key manager's reconcile, one table row per case of cert-manager's keymanager_controller_test.go (and
 * rotationPolicy Never), on the in-memory client: the Certificate and its next-key Secrets in, the Secrets
 * created or deleted, status.nextPrivateKeySecretName and the Events out. Keys are generated off the workers
 * (key-generations.ts): a row that needs one reconciles, waits for the key manager's requeue, and reconciles
 * again, as the controller's queue would.
 */

import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Result } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateSpec } from '../../../api/types.ts';
import { generatePrivateKey, parsePrivateKey, publicKeysEqual } from '../../../pki/index.ts';
import { STALE_RETRY_MS } from '../../issuers/stale-reads.ts';
import {
  certificate,
  condition,
  FakeEnvironment,
  keyPair,
  type KeyPair,
  nextKeySecret,
  tlsSecret,
} from '@certkit/testenv/controllers/fake-environment';
import { keyManagerReconciler } from './keymanager.ts';

let ecdsa: KeyObject;
let rsa: KeyObject;
let current: KeyPair;

before(async () => {
  ecdsa = await generatePrivateKey({ algorithm: 'ECDSA' });
  rsa = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
  current = await keyPair();
});

interface Row {
  name: string;
  certificate?: () => Certificate;
  secrets?: (cert: Certificate) => Secret[];
  /** The key manager asks for a new key: reconcile, wait for the key, reconcile again. */
  generates?: boolean;
  writes: (string | RegExp)[];
  /** status.nextPrivateKeySecretName after the reconcile (when it wrote status). */
  nextKeyName?: string | RegExp;
  events?: (string | RegExp)[];
  result?: Result;
  check?: (env: FakeEnvironment) => void;
}

const issuing = (status: Certificate['status'] = {}, spec: Partial<CertificateSpec> = {}) =>
  certificate(spec, { ...status, conditions: [condition('Issuing', 'True', 'DoesNotExist')] });
const named = (name: string, spec: Partial<CertificateSpec> = {}) =>
  issuing({ nextPrivateKeySecretName: name }, spec);
const STATUS = 'update certificates.cert-manager.io/status web';

const rows: Row[] = [
  { name: 'does nothing for a Certificate that does not exist', writes: [] },
  {
    name: 'does nothing when there is no Issuing condition and no next key',
    certificate: () => certificate(),
    writes: [],
  },
  {
    name: 'once Issuing is False, deletes the next-key Secret and clears its name',
    certificate: () =>
      certificate(
        {},
        { nextPrivateKeySecretName: 'web-next', conditions: [condition('Issuing', 'False', 'Failed')] },
      ),
    secrets: (c) => [nextKeySecret(c, 'web-next', ecdsa)],
    writes: ['delete secrets web-next', STATUS],
    nextKeyName: undefined,
  },
  {
    name: 'once Issuing is gone (issued), deletes the used next-key Secret',
    certificate: () => certificate({}, { revision: 1 }),
    secrets: (c) => [nextKeySecret(c, 'web-next', ecdsa)],
    writes: ['delete secrets web-next'],
  },
  {
    name: 'creates a Secret with a new key and records its name when Issuing=True',
    certificate: () => issuing(),
    generates: true,
    writes: [/^create secrets web-[a-z0-9]{5}$/, STATUS],
    nextKeyName: /^web-[a-z0-9]{5}$/,
    events: [/^Normal Generated: Stored new private key in temporary Secret resource "web-[a-z0-9]{5}"$/],
  },
  {
    name: 'creates the Secret under the name already allocated in the status',
    certificate: () => named('web-next'),
    generates: true,
    writes: ['create secrets web-next'],
    events: ['Normal Generated: Stored new private key in temporary Secret resource "web-next"'],
    check: (env) => {
      const created = env.written<Secret>('create', 'secrets')[0];
      assert.deepEqual(created.metadata?.labels, {
        'cert-manager.io/next-private-key': 'true',
        'controller.cert-manager.io/fao': 'true',
      });
      assert.deepEqual(
        created.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
        [['Certificate', 'web', true]],
      );
      const key = parsePrivateKey(Buffer.from(created.data?.['tls.key'] ?? '', 'base64'));
      assert.equal(key.asymmetricKeyType, 'ec');
    },
  },
  {
    name: "waits when the named Secret exists but is not the Certificate's (not in its cache yet, or not owned)",
    certificate: () => named('web-next'),
    secrets: (c) => [
      { ...nextKeySecret(c, 'web-next', ecdsa), metadata: { name: 'web-next', namespace: 'apps' } },
    ],
    writes: [],
    result: { requeueAfter: STALE_RETRY_MS },
  },
  {
    name: 'deletes all but the named one when several owned Secrets exist',
    certificate: () => named('web-b'),
    secrets: (c) => ['web-a', 'web-b', 'web-c'].map((n) => nextKeySecret(c, n, ecdsa)),
    writes: ['delete secrets web-a', 'delete secrets web-c'],
  },
  {
    name: 'deletes them all when several owned Secrets exist and none is named',
    certificate: () => named('web-x'),
    secrets: (c) => ['web-a', 'web-b'].map((n) => nextKeySecret(c, n, ecdsa)),
    writes: ['delete secrets web-a', 'delete secrets web-b'],
  },
  {
    name: 'deletes a named and owned Secret without data',
    certificate: () => named('web-next'),
    secrets: (c) => [nextKeySecret(c, 'web-next', undefined)],
    writes: ['delete secrets web-next'],
  },
  {
    name: 'records the name of an owned Secret when none is recorded',
    certificate: () => issuing(),
    secrets: (c) => [nextKeySecret(c, 'web-next', ecdsa)],
    writes: [STATUS],
    nextKeyName: 'web-next',
  },
  {
    name: 'deletes an owned Secret whose name differs from the recorded one',
    certificate: () => named('web-other'),
    secrets: (c) => [nextKeySecret(c, 'web-next', ecdsa)],
    writes: ['delete secrets web-next'],
  },
  {
    name: 'deletes an owned Secret holding invalid key data',
    certificate: () => named('web-next'),
    secrets: (c) => [{ ...nextKeySecret(c, 'web-next', ecdsa), data: { 'tls.key': 'Z2FyYmFnZQ==' } }],
    writes: ['delete secrets web-next'],
  },
  {
    name: 'deletes an owned Secret whose key no longer fits the spec, with an event',
    certificate: () => named('web-next'),
    secrets: (c) => [nextKeySecret(c, 'web-next', rsa)],
    writes: ['delete secrets web-next'],
    events: [
      /^Normal Deleted: Regenerating private key due to change in fields: \[.*spec\.privateKey\.algorithm.*\]$/,
    ],
  },
  {
    name: 'does nothing when the owned, named Secret holds a key fitting the spec',
    certificate: () => named('web-next'),
    secrets: (c) => [nextKeySecret(c, 'web-next', ecdsa)],
    writes: [],
  },
  {
    name: 'rotationPolicy Never: reuses the key of the current Secret',
    certificate: () => issuing({}, { privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Never' } }),
    secrets: (c) => [tlsSecret(c, current)],
    writes: [/^create secrets web-[a-z0-9]{5}$/, STATUS],
    nextKeyName: /^web-[a-z0-9]{5}$/,
    events: ['Normal Reused: Reusing private key stored in existing Secret resource "web-tls"'],
    check: (env) => {
      const created = env.written<Secret>('create', 'secrets')[0];
      const key = parsePrivateKey(Buffer.from(created.data?.['tls.key'] ?? '', 'base64'));
      assert.ok(publicKeysEqual(key, current.key), 'the current key');
    },
  },
  {
    name: 'rotationPolicy Never: a current key that no longer fits the spec is a Warning, and no key',
    certificate: () => issuing({}, { privateKey: { algorithm: 'RSA', rotationPolicy: 'Never' } }),
    secrets: (c) => [tlsSecret(c, current)],
    writes: [],
    events: [
      /^Warning CannotRegenerateKey: User intervention required: existing private key in Secret "web-tls" does not match requirements/,
    ],
  },
];

const matches = (actual: string[], expected: (string | RegExp)[]) => {
  assert.equal(actual.length, expected.length, `got ${JSON.stringify(actual)}`);
  for (const [i, e] of expected.entries()) {
    if (typeof e === 'string') assert.equal(actual[i], e);
    else assert.match(actual[i], e);
  }
};

describe('certificates-key-manager reconcile', () => {
  for (const row of rows) {
    it(row.name, async () => {
      const cert = row.certificate?.();
      const env = await FakeEnvironment.start({
        certificates: cert ? [cert] : [],
        secrets: cert && row.secrets ? row.secrets(cert) : [],
      });
      try {
        let keyReady!: () => void;
        const requeued = new Promise<void>((resolve) => (keyReady = resolve));
        const reconcile = keyManagerReconciler(env.ctx, () => keyReady());
        let result = await env.reconcile(reconcile);
        if (row.generates) {
          assert.deepEqual(env.writes(), [], 'nothing written while the key is generated');
          await requeued;
          result = await env.reconcile(reconcile);
        }
        matches(env.writes(), row.writes);
        if (row.writes.includes(STATUS)) {
          const name = env.lastStatus()?.nextPrivateKeySecretName;
          if (row.nextKeyName instanceof RegExp) assert.match(name ?? '', row.nextKeyName);
          else assert.equal(name, row.nextKeyName);
          // The status names the Secret that was created.
          const created = env.written<Secret>('create', 'secrets')[0];
          if (created) assert.equal(name, created.metadata?.name);
        }
        matches(env.events(), row.events ?? []);
        assert.deepEqual(result, row.result);
        row.check?.(env);
      } finally {
        await env.stop();
      }
    });
  }
});
