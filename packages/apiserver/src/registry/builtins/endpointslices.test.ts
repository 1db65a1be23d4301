import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredObject } from '@certkit/apimachinery';
import { endpointslices } from './endpointslices.ts';

function slice(endpoints: number, addresses: number, ports: number): StoredObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc', namespace: 'apps' },
    addressType: 'IPv4',
    endpoints: Array.from({ length: endpoints }, () => ({
      addresses: Array.from({ length: addresses }, (_, i) => `10.0.${i >> 8}.${i & 255}`),
    })),
    ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 1 + i, protocol: 'TCP' })),
  } as StoredObject;
}

const tooMany = (obj: StoredObject) =>
  endpointslices.validate!(obj, undefined, 'v1').filter((e) => e.type === 'FieldValueTooMany');

describe('EndpointSlice list limits', () => {
  it('allows 1000 endpoints of 100 addresses', () => {
    assert.deepEqual(tooMany(slice(1000, 1, 1)), []);
    assert.deepEqual(tooMany(slice(1, 100, 1)), []);
  });

  it("refuses more endpoints, addresses or ports than kube-apiserver, with field.TooMany's detail", () => {
    assert.deepEqual(tooMany(slice(1001, 1, 1)), [
      { type: 'FieldValueTooMany', field: 'endpoints', value: 1001, detail: 'must have at most 1000 items' },
    ]);
    assert.deepEqual(tooMany(slice(1, 101, 1)), [
      {
        type: 'FieldValueTooMany',
        field: 'endpoints[0].addresses',
        value: 101,
        detail: 'must have at most 100 items',
      },
    ]);
    assert.deepEqual(tooMany(slice(0, 0, 20001)), [
      { type: 'FieldValueTooMany', field: 'ports', value: 20001, detail: 'must have at most 20000 items' },
    ]);
  });
});
