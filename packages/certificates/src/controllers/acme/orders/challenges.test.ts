import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Order } from '../../../api/types.ts';
import { dns01TxtValue } from '../../../acme/client/index.ts';
import { challengeName } from '../../../acme/names.ts';
import { requiredChallengeObjects } from './challenges.ts';

const THUMBPRINT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

function order(): Order {
  return {
    metadata: { name: 'web-1-123', namespace: 'ns', uid: 'order-uid', labels: { team: 'a' } },
    spec: { request: '', issuerRef: { name: 'le', kind: 'Issuer', group: 'cert-manager.io' } },
    status: {
      authorizations: [
        {
          url: 'https://acme.test/authz/1',
          identifier: 'www.example.test',
          initialState: 'pending',
          challenges: [
            { url: 'https://acme.test/chal/1h', token: 'tok1', type: 'http-01' },
            { url: 'https://acme.test/chal/1d', token: 'tok1d', type: 'dns-01' },
          ],
        },
        {
          url: 'https://acme.test/authz/2',
          identifier: 'example.test',
          wildcard: true,
          initialState: 'pending',
          challenges: [{ url: 'https://acme.test/chal/2d', token: 'tok2', type: 'dns-01' }],
        },
        // Reused by the server: nothing to solve.
        {
          url: 'https://acme.test/authz/3',
          identifier: 'old.example.test',
          initialState: 'valid',
          challenges: [],
        },
      ],
    },
  };
}

const http01 = { http01: { ingress: {} } };
const dns01 = { dns01: { rfc2136: { nameserver: '127.0.0.1:53' } } };

describe('requiredChallengeObjects', () => {
  it('builds one owned, finalized Challenge per authorization to solve, with its key', () => {
    const { challenges, problems } = requiredChallengeObjects(order(), [http01, dns01], THUMBPRINT);
    assert.deepEqual(problems, []);
    assert.equal(challenges.length, 2);
    const [www, wildcard] = challenges;
    assert.equal(www.spec.type, 'HTTP-01');
    assert.equal(www.spec.key, `tok1.${THUMBPRINT}`);
    assert.equal(www.spec.url, 'https://acme.test/chal/1h');
    assert.equal(www.spec.authorizationURL, 'https://acme.test/authz/1');
    assert.deepEqual(www.metadata.finalizers, ['acme.cert-manager.io/finalizer']);
    assert.deepEqual(www.metadata.labels, { team: 'a' });
    assert.deepEqual(
      www.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [['Order', 'web-1-123', 'order-uid', true]],
    );
    assert.equal(www.metadata.name, challengeName('web-1-123', { ...www.spec, key: '' }));
    // Wildcards are DNS-01 only (the server offers nothing else); the name has no `*.`.
    assert.equal(wildcard.spec.type, 'DNS-01');
    assert.equal(wildcard.spec.dnsName, 'example.test');
    assert.equal(wildcard.spec.wildcard, true);
    assert.equal(wildcard.spec.key, dns01TxtValue(`tok2.${THUMBPRINT}`));
  });

  it('reports the names no solver can answer', () => {
    const { challenges, problems } = requiredChallengeObjects(order(), [http01], THUMBPRINT);
    assert.equal(challenges.length, 1);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /^\*\.example\.test: no configured challenge solvers can be used/);
  });
});
