import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ACMEIssuer } from '../../api/types.ts';
import { acmeSecretNames, dns01SolverSecretRefs } from './acme-secrets.ts';

describe('the Secrets an ACME issuer reads', () => {
  const acme = {
    server: 'https://acme.example/dir',
    privateKeySecretRef: { name: 'account' },
    externalAccountBinding: { keyID: 'k', keySecretRef: { name: 'eab', key: 'secret' } },
    solvers: [
      { http01: { ingress: {} } },
      {
        dns01: { rfc2136: { nameserver: '10.0.0.1', tsigSecretSecretRef: { name: 'tsig', key: 'secret' } } },
      },
      { dns01: { rfc2136: { nameserver: '10.0.0.1' } } },
      { dns01: { cloudflare: { apiTokenSecretRef: { name: 'cf', key: 'token' } } } },
      {
        dns01: {
          route53: {
            accessKeyIDSecretRef: { name: 'aws', key: 'id' },
            secretAccessKeySecretRef: { name: 'aws', key: 'secret' },
          },
        },
      },
      {
        dns01: { webhook: { groupName: 'g', solverName: 's', config: { secretRef: { name: 'free-form' } } } },
      },
      {
        dns01: {
          akamai: {
            accessTokenSecretRef: { name: 'ak', key: 'a' },
            clientSecretSecretRef: { name: 'ak', key: 'b' },
            clientTokenSecretRef: { name: 'ak', key: 'c' },
          },
        },
      },
    ],
  } as ACMEIssuer;

  it('lists DNS-01 solver credentials per provider in cert-manager order, named ones only, not webhook config', () => {
    assert.deepEqual(dns01SolverSecretRefs(acme), [
      { name: 'tsig', key: 'secret' },
      { name: 'cf', key: 'token' },
      { name: 'aws', key: 'secret' },
      { name: 'aws', key: 'id' },
      { name: 'ak', key: 'a' },
      { name: 'ak', key: 'b' },
      { name: 'ak', key: 'c' },
    ]);
  });

  it('indexes the account key, the EAB key and the solver Secrets once each', () => {
    assert.deepEqual(acmeSecretNames({ acme }), ['account', 'eab', 'tsig', 'cf', 'aws', 'ak']);
    assert.deepEqual(acmeSecretNames({}), []);
    assert.deepEqual(acmeSecretNames({ acme: { solvers: 'not a list' } as unknown as ACMEIssuer }), []);
  });
});
