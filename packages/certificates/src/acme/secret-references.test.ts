import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterIssuer } from '../api/types.ts';
import { example } from '@certkit/testenv/cert-manager/examples';
import { acmeSecretReferences } from './secret-references.ts';

describe('acmeSecretReferences', () => {
  it('lists the account key (key defaulted), the EAB key and nothing for HTTP-01 or webhook solvers', () => {
    assert.deepEqual(
      acmeSecretReferences({
        server: 'https://acme.example.com/directory',
        privateKeySecretRef: { name: 'account' },
        externalAccountBinding: { keyID: 'kid', keySecretRef: { name: 'eab', key: 'secret' } },
        solvers: [
          { http01: { ingress: {} } },
          { dns01: { webhook: { groupName: 'g', solverName: 's', config: { secretName: 'not-followed' } } } },
          { dns01: { route53: { region: 'eu-west-1' } } },
        ],
      }),
      [
        { name: 'account', key: 'tls.key', field: 'spec.acme.privateKeySecretRef' },
        { name: 'eab', key: 'secret', field: 'spec.acme.externalAccountBinding.keySecretRef' },
      ],
    );
  });

  it('lists every DNS-01 provider credential of the every-field example, with its field', () => {
    const issuer = example('ClusterIssuer', 'acme-every-field') as ClusterIssuer;
    const refs = acmeSecretReferences(issuer.spec.acme!).map((r) => `${r.field} → ${r.name}/${r.key ?? ''}`);
    assert.deepEqual(refs, [
      'spec.acme.privateKeySecretRef → acme-account-key/tls.key',
      'spec.acme.externalAccountBinding.keySecretRef → eab-secret/secret',
      'spec.acme.solvers[3].dns01.akamai.accessTokenSecretRef → akamai/access-token',
      'spec.acme.solvers[3].dns01.akamai.clientSecretSecretRef → akamai/client-secret',
      'spec.acme.solvers[3].dns01.akamai.clientTokenSecretRef → akamai/client-token',
      'spec.acme.solvers[4].dns01.cloudDNS.serviceAccountSecretRef → clouddns/key.json',
      'spec.acme.solvers[5].dns01.cloudflare.apiKeySecretRef → cloudflare/api-key',
      'spec.acme.solvers[6].dns01.route53.secretAccessKeySecretRef → route53/secret-access-key',
      'spec.acme.solvers[6].dns01.route53.accessKeyIDSecretRef → route53/access-key-id',
      'spec.acme.solvers[7].dns01.route53.secretAccessKeySecretRef → route53/secret-access-key',
      'spec.acme.solvers[8].dns01.azureDNS.clientSecretSecretRef → azuredns/client-secret',
      'spec.acme.solvers[11].dns01.digitalocean.tokenSecretRef → digitalocean/token',
      'spec.acme.solvers[12].dns01.acmeDNS.accountSecretRef → acme-dns/acmedns.json',
      'spec.acme.solvers[13].dns01.rfc2136.tsigSecretSecretRef → tsig/secret',
    ]);
  });
});
