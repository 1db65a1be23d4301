import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError, type FieldError, type KubeObject } from '@certkit/apimachinery';
import { certManagerAdmission } from './admission.ts';
import type { Challenge, ClusterIssuer, Issuer, Order } from './types.ts';
import { validateChallenge, validateIssuer, validateOrder } from './validation.ts';
import { dns01NameserverError, rfc2136Nameserver, splitHostPort } from './validation/acme-issuer.ts';
import { example, examplesOfKind } from '@certkit/testenv/cert-manager/examples';

const messages = (errors: FieldError[]) => errors.map(formatFieldError);
const IMMUTABLE = 'Forbidden: field is immutable once set';

const order = (): Order => example('Order', 'web-1-2963424813') as Order;
const challenge = (): Challenge => example('Challenge', 'web-1-2963424813-1104467473') as Challenge;

describe('validateOrder', () => {
  it('accepts any Order on create, even an empty one', () => {
    assert.deepEqual(validateOrder({ metadata: { name: 'o' }, spec: {} } as Order), []);
  });

  it('accepts an update that changes nothing, or only state and reason', () => {
    const now = order();
    now.status!.state = 'invalid';
    now.status!.reason = 'the server said no';
    assert.deepEqual(validateOrder(now, order()), []);
  });

  it('accepts fields set for the first time', () => {
    const old = order();
    delete old.status;
    old.spec.request = '';
    assert.deepEqual(validateOrder(order(), old), []);
  });

  const rows: { name: string; change: (o: Order) => void; errors: string[] }[] = [
    {
      name: 'a different CSR',
      change: (o) => (o.spec.request = Buffer.from('another').toString('base64')),
      errors: [`spec.request: ${IMMUTABLE}`],
    },
    {
      name: 'the order URL',
      change: (o) => (o.status!.url = 'https://x/order/2'),
      errors: [`status.url: ${IMMUTABLE}`],
    },
    {
      name: 'the finalize URL cleared',
      change: (o) => delete o.status!.finalizeURL,
      errors: [`status.finalizeURL: ${IMMUTABLE}`],
    },
    {
      name: 'the certificate',
      change: (o) => (o.status!.certificate = Buffer.from('other').toString('base64')),
      errors: [`status.certificate: ${IMMUTABLE}`],
    },
    {
      name: 'an authorization added',
      change: (o) => o.status!.authorizations!.push({ url: 'https://x/authz/2' }),
      errors: [`status.authorizations: ${IMMUTABLE}`],
    },
    {
      name: 'an authorization removed',
      change: (o) => (o.status!.authorizations = []),
      errors: [
        `status.authorizations: ${IMMUTABLE}`,
        `status.authorizations[0].url: ${IMMUTABLE}`,
        `status.authorizations[0].identifier: ${IMMUTABLE}`,
        `status.authorizations[0].wildcard: ${IMMUTABLE}`,
        `status.authorizations[0].initialState: ${IMMUTABLE}`,
        `status.authorizations[0].challenges: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[0].url: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[0].type: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[0].token: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].url: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].type: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].token: ${IMMUTABLE}`,
      ],
    },
    {
      name: "an authorization's identifier and initial state",
      change: (o) => {
        o.status!.authorizations![0].identifier = 'www.example.com';
        o.status!.authorizations![0].initialState = 'valid';
      },
      errors: [
        `status.authorizations[0].identifier: ${IMMUTABLE}`,
        `status.authorizations[0].initialState: ${IMMUTABLE}`,
      ],
    },
    {
      name: 'wildcard false → true (a set false is fixed too)',
      change: (o) => (o.status!.authorizations![0].wildcard = true),
      errors: [`status.authorizations[0].wildcard: ${IMMUTABLE}`],
    },
    {
      name: "a challenge's token and type",
      change: (o) => {
        o.status!.authorizations![0].challenges![1].token = 'other';
        o.status!.authorizations![0].challenges![1].type = 'tls-alpn-01';
      },
      errors: [
        `status.authorizations[0].challenges[1].type: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].token: ${IMMUTABLE}`,
      ],
    },
    {
      name: 'a challenge dropped',
      change: (o) => o.status!.authorizations![0].challenges!.pop(),
      errors: [
        `status.authorizations[0].challenges: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].url: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].type: ${IMMUTABLE}`,
        `status.authorizations[0].challenges[1].token: ${IMMUTABLE}`,
      ],
    },
  ];
  for (const row of rows) {
    it(`refuses ${row.name}`, () => {
      const now = order();
      row.change(now);
      assert.deepEqual(messages(validateOrder(now, order())), row.errors);
    });
  }

  it('compares the CSR as bytes, not as base64 text', () => {
    const now = order();
    // The same bytes, with the base64 wrapped: Go decodes both to one []byte.
    now.spec.request = now.spec.request.replace(/(.{64})/g, '$1\n');
    assert.deepEqual(validateOrder(now, order()), []);
  });
});

describe('validateChallenge', () => {
  it('accepts any Challenge on create and a status-only update', () => {
    assert.deepEqual(validateChallenge(challenge()), []);
    const now = challenge();
    now.status = { processing: true, presented: true, state: 'pending', reason: 'Waiting' };
    assert.deepEqual(validateChallenge(now, challenge()), []);
  });

  it('refuses any spec change, deep inside the solver too', () => {
    for (const change of [
      (c: Challenge) => (c.spec.key = 'other'),
      (c: Challenge) => (c.spec.solver.http01!.ingress!.ingressClassName = 'traefik'),
      (c: Challenge) => (c.spec.wildcard = true),
    ]) {
      const now = challenge();
      change(now);
      assert.deepEqual(messages(validateChallenge(now, challenge())), [
        'spec: Forbidden: challenge spec is immutable after creation',
      ]);
    }
  });

  it('treats an absent field as its zero value, as the Go struct does', () => {
    const now = challenge();
    delete now.spec.wildcard;
    assert.deepEqual(validateChallenge(now, challenge()), []);
  });
});

describe('certManagerAdmission for acme.cert-manager.io', () => {
  const ACME = 'acme.cert-manager.io';
  it('judges Order updates on the main resource and on status', () => {
    const now = order();
    now.status!.url = 'https://x/order/9';
    for (const subresource of [undefined, 'status']) {
      assert.deepEqual(
        messages(certManagerAdmission(ACME, 'Order', now as KubeObject, order() as KubeObject, subresource)),
        [`status.url: ${IMMUTABLE}`],
      );
    }
    assert.deepEqual(certManagerAdmission(ACME, 'Order', now as KubeObject, undefined), []);
  });

  it('judges Challenge spec updates', () => {
    const now = challenge();
    now.spec.token = 'x';
    assert.equal(
      certManagerAdmission(ACME, 'Challenge', now as KubeObject, challenge() as KubeObject).length,
      1,
    );
  });

  it('leaves other kinds of the group, and other subresources, alone', () => {
    const now = challenge();
    now.spec.token = 'x';
    assert.deepEqual(certManagerAdmission(ACME, 'Other', now as KubeObject, challenge() as KubeObject), []);
    assert.deepEqual(
      certManagerAdmission(ACME, 'Challenge', now as KubeObject, challenge() as KubeObject, 'scale'),
      [],
    );
  });
});

// ---------------------------------------------------------------------------------------------------------
// spec.acme of Issuers and ClusterIssuers

function issuer(acme: Record<string, unknown>): Issuer {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'i', namespace: 'default' },
    spec: {
      acme: { server: 'https://acme.example.com/directory', privateKeySecretRef: { name: 'k' }, ...acme },
    } as Issuer['spec'],
  };
}

const dns01 = (config: Record<string, unknown>) => issuer({ solvers: [{ dns01: config }] });
const sel = (name: string, key = 'k') => ({ name, key });
const AT = 'spec.acme.solvers[0].dns01';

const acmeRows: { name: string; issuer: Issuer; errors: string[] }[] = [
  {
    name: 'akamai with nothing set',
    issuer: dns01({ akamai: {} }),
    errors: [
      `${AT}.akamai.accessTokenSecretRef.name: Required value: secret name is required`,
      `${AT}.akamai.accessTokenSecretRef.key: Required value: secret key is required`,
      `${AT}.akamai.clientSecretSecretRef.name: Required value: secret name is required`,
      `${AT}.akamai.clientSecretSecretRef.key: Required value: secret key is required`,
      `${AT}.akamai.clientTokenSecretRef.name: Required value: secret name is required`,
      `${AT}.akamai.clientTokenSecretRef.key: Required value: secret key is required`,
      `${AT}.akamai.serviceConsumerDomain: Required value`,
    ],
  },
  {
    name: 'azureDNS with a half service principal and a managed identity',
    issuer: dns01({ azureDNS: { clientID: 'c', managedIdentity: {}, environment: 'Mars' } }),
    errors: [
      `${AT}.azureDNS.clientSecretSecretRef: Required value`,
      `${AT}.azureDNS.tenantID: Required value`,
      `${AT}.azureDNS.managedIdentity: Forbidden: managed identity cannot be used at the same time as clientID, clientSecretSecretRef or tenantID`,
      `${AT}.azureDNS.subscriptionID: Required value`,
      `${AT}.azureDNS.resourceGroupName: Required value`,
      `${AT}.azureDNS.environment: Invalid value: "Mars": must be either empty or one of AzurePublicCloud, AzureChinaCloud, AzureGermanCloud, or AzureUSGovernmentCloud`,
    ],
  },
  {
    name: 'azureDNS managed identity with every id',
    issuer: dns01({
      azureDNS: {
        subscriptionID: 's',
        resourceGroupName: 'r',
        managedIdentity: { clientID: 'c', resourceID: 'r', tenantID: 't' },
      },
    }),
    errors: [
      `${AT}.azureDNS.managedIdentity: Forbidden: managedIdentityClientID and managedIdentityResourceID cannot both be specified`,
      `${AT}.azureDNS.managedIdentity: Forbidden: managedIdentityTenantID and managedIdentityResourceID cannot both be specified`,
    ],
  },
  {
    name: 'azureDNS managed identity tenant without client',
    issuer: dns01({
      azureDNS: { subscriptionID: 's', resourceGroupName: 'r', managedIdentity: { tenantID: 't' } },
    }),
    errors: [
      `${AT}.azureDNS.managedIdentity: Required value: managedIdentityClientID is required when using managedIdentityTenantID`,
    ],
  },
  {
    name: 'cloudDNS without project, with a keyless service account',
    issuer: dns01({ cloudDNS: { serviceAccountSecretRef: { name: 'sa' } } }),
    errors: [
      `${AT}.cloudDNS.serviceAccountSecretRef.key: Required value: secret key is required`,
      `${AT}.cloudDNS.project: Required value`,
    ],
  },
  {
    name: 'cloudflare with both key and token, key without email',
    issuer: dns01({ cloudflare: { apiKeySecretRef: sel('a'), apiTokenSecretRef: sel('t') } }),
    errors: [
      `${AT}.cloudflare: Forbidden: apiKeySecretRef and apiTokenSecretRef cannot both be specified`,
      `${AT}.cloudflare.email: Required value`,
    ],
  },
  {
    name: 'route53 with both access key forms',
    issuer: dns01({ route53: { accessKeyID: 'AKIA', accessKeyIDSecretRef: { name: 'x' } } }),
    errors: [
      `${AT}.route53: Required value: accessKeyID and accessKeyIDSecretRef cannot both be specified`,
      `${AT}.route53.accessKeyIDSecretRef.key: Required value: secret key is required`,
    ],
  },
  {
    name: 'route53 with ambient credentials',
    issuer: dns01({ route53: { region: 'eu-west-1' } }),
    errors: [],
  },
  {
    name: 'acmeDNS without host',
    issuer: dns01({ acmeDNS: { accountSecretRef: sel('a') } }),
    errors: [`${AT}.acmeDNS.host: Required value`],
  },
  {
    name: 'acmeDNS next to cloudflare (upstream never forbade it)',
    issuer: dns01({
      cloudflare: { apiTokenSecretRef: sel('t') },
      acmeDNS: { host: 'h', accountSecretRef: sel('a') },
    }),
    errors: [],
  },
  {
    name: 'digitalocean without token',
    issuer: dns01({ digitalocean: {} }),
    errors: [
      `${AT}.digitalocean.tokenSecretRef.name: Required value: secret name is required`,
      `${AT}.digitalocean.tokenSecretRef.key: Required value: secret key is required`,
    ],
  },
  {
    name: 'rfc2136 without nameserver',
    issuer: dns01({ rfc2136: {} }),
    errors: [`${AT}.rfc2136.nameserver: Required value`],
  },
  {
    name: 'rfc2136 with a bad nameserver, an unknown algorithm and a key name without secret',
    issuer: dns01({
      rfc2136: { nameserver: '1.2.3.4:53:53', tsigAlgorithm: 'hmac-sha3', tsigKeyName: 'k' },
    }),
    errors: [
      `${AT}.rfc2136.nameserver: Invalid value: "1.2.3.4:53:53": nameserver must be set in the form host:port where host is an IPv4 address, an enclosed IPv6 address or a hostname and port is an optional port number.`,
      `${AT}.rfc2136.tsigAlgorithm: Unsupported value: "hmac-sha3": supported values: "HMACMD5", "HMACSHA1", "HMACSHA224", "HMACSHA256", "HMACSHA384", "HMACSHA512"`,
      `${AT}.rfc2136.tsigSecretSecretRef.name: Required value: secret name is required`,
      `${AT}.rfc2136.tsigSecretSecretRef.key: Required value: secret key is required`,
    ],
  },
  {
    name: 'rfc2136 with a secret but no key name',
    issuer: dns01({
      rfc2136: { nameserver: '[2001:db8::1]', tsigSecretSecretRef: sel('tsig'), tsigAlgorithm: 'hmacSHA256' },
    }),
    errors: [`${AT}.rfc2136.tsigKeyName: Required value`],
  },
  {
    name: 'rfc2136 unsigned',
    issuer: dns01({ rfc2136: { nameserver: 'ns1.example.com' } }),
    errors: [],
  },
  {
    name: 'webhook without solver name',
    issuer: dns01({ webhook: { groupName: 'g' } }),
    errors: [`${AT}.webhook.solverName: Required value: solver name must be specified`],
  },
  {
    name: 'dns01 with a bad cnameStrategy, bad nameservers and no provider',
    issuer: dns01({ cnameStrategy: 'Always', nameservers: ['8.8.8.8', 'https://', '10.0.0.1:53'] }),
    errors: [
      `${AT}.cnameStrategy: Invalid value: "Always": must be one of "None" or "Follow"`,
      `${AT}.nameservers[0]: Invalid value: "8.8.8.8": must be in the format <ip address>:<port>`,
      `${AT}.nameservers[1]: Invalid value: "https://": must be in the format https://<DoH RFC 8484 server address>`,
      `${AT}: Required value: no DNS01 provider configured`,
    ],
  },
  {
    name: 'http01 and dns01 in one solver, and a negative wait',
    issuer: issuer({
      solvers: [
        {
          http01: { ingress: {} },
          dns01: { webhook: { groupName: 'g', solverName: 's' } },
          waitInsteadOfSelfCheck: '-1s',
        },
      ],
    }),
    errors: [
      'spec.acme.solvers[0]: Forbidden: may not specify more than one solver type in a single solver',
      'spec.acme.solvers[0].waitInsteadOfSelfCheck: Invalid value: "-1s": waitInsteadOfSelfCheck must not be negative',
    ],
  },
  {
    name: 'an ingress with name and class, a bad class name and service type',
    issuer: issuer({
      solvers: [
        { http01: { ingress: { name: 'web', ingressClassName: 'Azure/AGW', serviceType: 'LoadBalancer' } } },
      ],
    }),
    errors: [
      "spec.acme.solvers[0].http01.ingress: Forbidden: only one of 'ingressClassName', 'name' or 'class' should be specified",
      `spec.acme.solvers[0].http01.ingress.ingressClassName: Invalid value: "Azure/AGW": must be a valid IngressClass name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.acme.solvers[0].http01.ingress.serviceType: Invalid value: "LoadBalancer": must be empty, "ClusterIP" or "NodePort"',
    ],
  },
  {
    name: 'gateway parentRefs: the first incomplete one is reported',
    issuer: issuer({
      solvers: [
        {
          http01: {
            gatewayHTTPRoute: {
              parentRefs: [{ name: 'gw', kind: 'Gateway' }, { name: 'a' }, { kind: 'Gateway' }],
            },
          },
        },
      ],
    }),
    errors: [
      'spec.acme.solvers[0].http01.gatewayHTTPRoute.parentRefs[1].kind: Required value: kind is required when name is specified',
    ],
  },
  {
    name: 'an empty http01',
    issuer: issuer({ solvers: [{ http01: {} }] }),
    errors: ['spec.acme.solvers[0].http01: Required value: no HTTP01 solver type configured'],
  },
  { name: 'no solvers at all (a pre-authorizing server needs none)', issuer: issuer({}), errors: [] },
];

describe('validateIssuer: spec.acme', () => {
  for (const row of acmeRows) {
    it(row.errors.length === 0 ? `accepts ${row.name}` : `rejects ${row.name}`, () => {
      assert.deepEqual(messages(validateIssuer(row.issuer)), row.errors);
    });
  }

  it('accepts the every-field ACME ClusterIssuer (a solver of every kind, every provider)', () => {
    const every = examplesOfKind('ClusterIssuer').find((e) => e.object.metadata.name === 'acme-every-field');
    assert.ok(every);
    assert.deepEqual(messages(validateIssuer(every.object as ClusterIssuer)), []);
  });
});

describe('Go address parsing', () => {
  it('splitHostPort as net.SplitHostPort', () => {
    const rows: [string, string][] = [
      ['8.8.8.8:53', '8.8.8.8|53'],
      ['8.8.8.8:', '8.8.8.8|'],
      [':53', '|53'],
      ['[2001:db8::1]:53', '2001:db8::1|53'],
      ['ns.example.com:5353', 'ns.example.com|5353'],
      ['8.8.8.8', 'address 8.8.8.8: missing port in address'],
      ['[2001:db8::1]', 'address [2001:db8::1]: missing port in address'],
      ['2001:db8::1:53', 'address 2001:db8::1:53: too many colons in address'],
      ['[2001:db8::1]::53', 'address [2001:db8::1]::53: too many colons in address'],
      ['[::1', "address [::1: missing ']' in address"],
      ['a[b:53', "address a[b:53: unexpected '[' in address"],
      ['a]b:53', "address a]b:53: unexpected ']' in address"],
    ];
    for (const [input, want] of rows) {
      const got = splitHostPort(input);
      assert.equal('error' in got ? got.error : `${got.host}|${got.port}`, want, input);
    }
  });

  it('rfc2136Nameserver as util.ValidNameserver', () => {
    const rows: [string, string][] = [
      ['8.8.8.8', '8.8.8.8:53'],
      [' 8.8.8.8: ', '8.8.8.8:53'],
      ['8.8.8.8:5353', '8.8.8.8:5353'],
      ['[2001:db8::1]', '[2001:db8::1]:53'],
      ['[2001:db8::1]:', '[2001:db8::1]:53'],
      ['nameserver.com', 'nameserver.com:53'],
      [':53', 'error: RFC2136 nameserver has no host defined, :53'],
      ['', 'error: RFC2136 nameserver missing'],
      ['1:2:3', 'error: RFC2136 nameserver is invalid: address 1:2:3: too many colons in address'],
    ];
    for (const [input, want] of rows) {
      const got = rfc2136Nameserver(input);
      assert.equal('error' in got ? `error: ${got.error}` : got.hostPort, want, JSON.stringify(input));
    }
  });

  it('dns01NameserverError as util.ValidDNS01Nameserver', () => {
    assert.equal(dns01NameserverError('10.0.0.1:53'), undefined);
    assert.equal(dns01NameserverError('[::1]:53'), undefined);
    assert.equal(dns01NameserverError('https://1.1.1.1/dns-query'), undefined);
    assert.equal(dns01NameserverError('10.0.0.1'), 'must be in the format <ip address>:<port>');
    assert.equal(
      dns01NameserverError('https://'),
      'must be in the format https://<DoH RFC 8484 server address>',
    );
  });
});
