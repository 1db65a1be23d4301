import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StatusError } from '@certkit/apimachinery';
import { parseApiPath } from './request-info.ts';

describe('parseApiPath', () => {
  const resource = (request: Record<string, unknown>) => ({
    kind: 'resource',
    request: {
      group: '',
      version: 'v1',
      namespace: undefined,
      name: undefined,
      subresource: undefined,
      legacyWatch: false,
      ...request,
    },
  });

  it('reads what a path addresses, as kube-apiserver does', () => {
    const cases: [string, unknown][] = [
      ['/api', { kind: 'other' }],
      ['/api/v1', { kind: 'groupVersion', group: '', version: 'v1' }],
      ['/apis/cert-manager.io', { kind: 'group', group: 'cert-manager.io' }],
      ['/apis/cert-manager.io/v1/', { kind: 'groupVersion', group: 'cert-manager.io', version: 'v1' }],
      ['/api/v1/secrets', resource({ resource: 'secrets' })],
      ['/api/v1/namespaces', resource({ resource: 'namespaces' })],
      ['/api/v1/namespaces/ns', resource({ resource: 'namespaces', name: 'ns' })],
      [
        '/api/v1/namespaces/ns/status',
        resource({ resource: 'namespaces', name: 'ns', subresource: 'status' }),
      ],
      [
        '/api/v1/namespaces/ns/finalize',
        resource({ resource: 'namespaces', name: 'ns', subresource: 'finalize' }),
      ],
      ['/api/v1/namespaces/ns/secrets', resource({ namespace: 'ns', resource: 'secrets' })],
      [
        '/apis/cert-manager.io/v1/namespaces/ns/certificates/c%2D1/status',
        resource({
          group: 'cert-manager.io',
          namespace: 'ns',
          resource: 'certificates',
          name: 'c-1',
          subresource: 'status',
        }),
      ],
      // The TokenRequest API: authorised as verb create on serviceaccounts/token.
      [
        '/api/v1/namespaces/ns/serviceaccounts/robot/token',
        resource({ namespace: 'ns', resource: 'serviceaccounts', name: 'robot', subresource: 'token' }),
      ],
      ['/api/v1/namespaces/ns/secrets/s/status/extra', { kind: 'other' }],
      ['/api/v1/watch', { kind: 'other' }],
      [
        '/api/v1/watch/namespaces/ns/secrets/s',
        resource({ namespace: 'ns', resource: 'secrets', name: 's', legacyWatch: true }),
      ],
      ['/api/v1/watch/secrets', resource({ resource: 'secrets', legacyWatch: true })],
      ['/healthz', { kind: 'other' }],
    ];
    for (const [path, expected] of cases) assert.deepEqual(parseApiPath(path), expected, path);
  });
  it('refuses escapes that decode to no UTF-8 with a 400, not a URIError', () => {
    for (const path of ['/api/v1/namespaces/%ff/secrets', '/apis/g/v1/x/%c3%28']) {
      assert.throws(
        () => parseApiPath(path),
        (err: StatusError) => err.code === 400 && /not UTF-8/.test(err.status.message ?? ''),
      );
    }
  });
});
