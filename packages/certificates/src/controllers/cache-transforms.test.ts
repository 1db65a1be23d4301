import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubeObject } from '@certkit/apimachinery';
import type { CertificateRequest } from '../api/types.ts';
import {
  leanCertificateRequest,
  leanObject,
  leanSecret,
  SHORT_STRING_LENGTH,
  StringSharing,
  withoutManagedFields,
} from './cache-transforms.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A fresh string instance with the given content (as JSON.parse gives one per object). */
const fresh = (bytes: Buffer) => bytes.toString('base64');

function secret(data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 's',
      namespace: 'ns',
      labels: { a: 'b' },
      managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
    },
    data,
  } as KubeObject;
}

describe('cache transforms', () => {
  it('drop managedFields and keep the rest of the metadata', () => {
    const obj = withoutManagedFields(secret({ 'tls.key': 'a2V5' }));
    assert.deepEqual(obj.metadata, { name: 's', namespace: 'ns', labels: { a: 'b' } });
    assert.deepEqual(withoutManagedFields(obj), obj, 'idempotent');
    const frozen = Object.freeze(secret({}));
    assert.equal(withoutManagedFields(frozen), frozen, 'a cached (frozen) object passes through');
    assert.deepEqual(leanSecret(secret({})).metadata, { name: 's', namespace: 'ns', labels: { a: 'b' } });
  });

  it('leave what a Secret and a request carry unchanged', () => {
    const data = { 'tls.crt': 'Y2VydA==', 'ca.crt': 'Y2E=', 'tls.key': 'a2V5', 'keystore.p12': 'cDEy' };
    assert.deepEqual((leanSecret(secret({ ...data })) as { data: unknown }).data, data);
    const cr = {
      metadata: { name: 'r', managedFields: [] },
      spec: { request: 'Y3Ny', issuerRef: { name: 'ca' } },
      status: { certificate: 'Y2VydA==', ca: 'Y2E=', conditions: [{ type: 'Ready', status: 'True' }] },
    } as unknown as CertificateRequest;
    const lean = leanCertificateRequest(cr) as CertificateRequest;
    assert.deepEqual(lean.status, {
      certificate: 'Y2VydA==',
      ca: 'Y2E=',
      conditions: [{ type: 'Ready', status: 'True' }],
    });
    assert.equal(lean.spec.request, 'Y3Ny');
    assert.equal(lean.metadata.managedFields, undefined);
  });

  it('keep one copy of a CA bundle that many Secrets and requests carry', () => {
    const bundle = Buffer.alloc(256 * 1024, 7);
    const count = 100;
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept: KubeObject[] = [];
    for (let i = 0; i < count; i++) {
      kept.push(leanSecret(secret({ 'ca.crt': fresh(bundle), 'tls.crt': fresh(bundle) })));
      kept.push(
        leanCertificateRequest({ metadata: { name: `r${i}` }, status: { ca: fresh(bundle) } } as never),
      );
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Unshared, the 300 copies of ~340 KB of base64 would hold ~100 MB.
    assert.ok(grown < 10 * 1024 * 1024, `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MB`);
    assert.equal(kept.length, 2 * count);
  });

  it('keep one copy of the short strings objects repeat, wherever they are, and change nothing else', () => {
    const object = (i: number) =>
      ({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: `c${i}`, namespace: 'ns', annotations: { note: fresh(Buffer.alloc(90, 1)) } },
        spec: { dnsNames: [fresh(Buffer.alloc(90, 2)), `c${i}.example`], issuerRef: { name: 'ca' } },
        status: { conditions: [{ type: 'Ready', message: fresh(Buffer.alloc(90, 3)) }], revision: i },
      }) as unknown as KubeObject;
    assert.deepEqual(leanObject(object(1)), object(1));
    const long = 'x'.repeat(SHORT_STRING_LENGTH + 1);
    assert.equal((leanObject({ metadata: { name: long } }) as KubeObject).metadata!.name, long);

    // The same objects kept with and without the transform: the difference is what sharing saved.
    const count = 10_000;
    const growth = (transform: (o: KubeObject) => KubeObject) => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const kept: KubeObject[] = [];
      for (let i = 0; i < count; i++) {
        const lean = transform(object(i));
        kept.push({ metadata: lean.metadata, spec: lean.spec, status: lean.status } as KubeObject);
      }
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      assert.equal(kept.length, count, 'kept alive until measured');
      return grown;
    };
    const unshared = growth((o) => o);
    const shared = growth(leanObject);
    // Three 120-character strings per object, of ~136 bytes each on the heap.
    const copies = count * 3 * 136;
    assert.ok(
      unshared - shared > copies * 0.75,
      `sharing saved ${((unshared - shared) / 1e6).toFixed(1)} MB of ${(copies / 1e6).toFixed(1)} MB`,
    );
  });

  it('share contents asked for again and forget the rest, within the capacity', () => {
    const sharing = new StringSharing(4);
    const text = (n: number) => fresh(Buffer.from(`content ${n}`));
    assert.equal(sharing.share(text(0)), text(0));
    sharing.share(text(1));
    for (let i = 2; i < 100; i++) {
      assert.equal(sharing.share(text(i)), text(i));
      // Asked for on every other string: met in the older generation, it moves to the newer one.
      if (i % 2 === 0) sharing.share(text(0));
      assert.ok(sharing.remembers(text(0)), `content 0 still remembered after ${i} others`);
      assert.ok(sharing.size <= 4, `at most the capacity remembered, not ${sharing.size}`);
    }
    assert.equal(sharing.remembers(text(1)), false, 'a content nobody asked for again is forgotten');
    assert.ok(sharing.remembers(text(99)), 'the latest content is remembered');
  });
});
