/**
 * The schema of `IssuerSpec.acme` and of one challenge solver (pkg/apis/acme/v1/types_issuer.go), field by
 * field: the solver schema is shared by Issuers, ClusterIssuers and Challenges (`spec.solver`). Only the
 * Kubernetes core types a solver passes through to its Pod (affinity) and a webhook solver's free-form
 * config are open objects. No defaults: the stored object is what the user wrote.
 */

import {
  AZURE_DNS_ENVIRONMENTS,
  AZURE_ZONE_TYPES,
  CNAME_STRATEGIES,
  HMAC_KEY_ALGORITHMS,
  RENEWAL_INFORMATION_SOURCES,
  RFC2136_PROTOCOLS,
} from '../acme-constants.ts';
import {
  boolean,
  bytes,
  integer,
  list,
  localObjectReference,
  object,
  oneOf,
  openObject,
  type Schema,
  secretKeySelector,
  string,
  stringList,
  stringMap,
} from './builders.ts';

/** A resource.Quantity: a number or a string such as `100m` (int-or-string, as Kubernetes declares it). */
const quantity: Schema = {
  'x-kubernetes-int-or-string': true,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  pattern:
    '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
};

const metadataTemplate = (what: string) =>
  object(`Labels and annotations added to the ${what} the solver creates.`, {
    annotations: stringMap(`Annotations added to the ${what}.`),
    labels: stringMap(`Labels added to the ${what}.`),
  });

const podSecurityContext = object('Pod-level security settings of the solver Pod; replaces the default.', {
  seLinuxOptions: object('SELinux context of the containers.', {
    level: string('SELinux level label.'),
    role: string('SELinux role label.'),
    type: string('SELinux type label.'),
    user: string('SELinux user label.'),
  }),
  runAsUser: integer('UID the containers run as.', 'int64'),
  runAsGroup: integer('GID the containers run as.', 'int64'),
  runAsNonRoot: boolean('Refuse to start a container that would run as root.'),
  supplementalGroups: list('Further groups of the first process of each container.', {
    type: 'integer',
    format: 'int64',
  }),
  fsGroup: integer('Group that owns the Pod volumes.', 'int64'),
  sysctls: list(
    'Namespaced sysctls set for the Pod.',
    object('One sysctl.', { name: string('Name of the sysctl.'), value: string('Value to set.') }, [
      'name',
      'value',
    ]),
  ),
  fsGroupChangePolicy: string('When volume ownership is changed to fsGroup: OnRootMismatch or Always.'),
  seccompProfile: object(
    'Seccomp profile of the containers.',
    {
      localhostProfile: string('Profile file on the node, for type Localhost.'),
      type: string('RuntimeDefault, Unconfined or Localhost.'),
    },
    ['type'],
  ),
});

const podTemplate = object('Overrides for the solver Pod the in-cluster HTTP-01 solver creates.', {
  metadata: metadataTemplate('solver Pod'),
  spec: object('Pod spec fields merged over the solver Pod defaults.', {
    nodeSelector: stringMap('Node labels the Pod must be scheduled on; merged over kubernetes.io/os: linux.'),
    affinity: openObject('A core/v1 Affinity for the Pod, passed through unchanged.'),
    tolerations: list(
      'Tolerations appended to the Pod.',
      object('A core/v1 Toleration.', {
        effect: string('Taint effect to match: NoSchedule, PreferNoSchedule or NoExecute.'),
        key: string('Taint key to match; empty matches every key with operator Exists.'),
        operator: string('Exists or Equal (the default).'),
        tolerationSeconds: integer('How long a NoExecute taint is tolerated.', 'int64'),
        value: string('Taint value to match with operator Equal.'),
      }),
    ),
    priorityClassName: string('PriorityClass of the Pod.'),
    serviceAccountName: string('ServiceAccount the Pod runs as.'),
    // A list map keyed by name, as core/v1 declares it. Upstream defaults name to ""; this CRD carries no
    // defaults, so name is required instead (a list-map key must be one or the other).
    imagePullSecrets: {
      description: 'Secrets for pulling the solver image.',
      type: 'array',
      items: {
        ...localObjectReference('A Secret in the Challenge namespace.'),
        'x-kubernetes-map-type': 'atomic',
      },
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
    },
    securityContext: podSecurityContext,
    resources: object('Compute resources of the solver container, merged over the controller flags.', {
      limits: {
        description: 'Most resources the container may use.',
        type: 'object',
        additionalProperties: quantity,
      },
      requests: {
        description: 'Resources reserved for the container.',
        type: 'object',
        additionalProperties: quantity,
      },
    }),
  }),
});

const serviceType = string('Type of the solver Service: NodePort (the default when empty) or ClusterIP.');

const ingress = object('Solve through an Ingress routing the challenge path to a solver Pod.', {
  serviceType,
  ingressClassName: string('IngressClass of the Ingress created (spec.ingressClassName).'),
  class: string('Value of the kubernetes.io/ingress.class annotation on the Ingress created.'),
  name: string('Add the challenge path to this existing Ingress instead of creating one.'),
  podTemplate,
  ingressTemplate: object('Overrides for the Ingress created.', {
    metadata: metadataTemplate('Ingress'),
  }),
});

const gatewayHTTPRoute = object('Solve through a Gateway API HTTPRoute routing to a solver Pod.', {
  serviceType,
  labels: stringMap('Labels added to the HTTPRoute.'),
  parentRefs: list(
    'Gateways (or other parents) the HTTPRoute attaches to.',
    object(
      'A Gateway API ParentReference.',
      {
        // The Gateway API's own bounds (sigs.k8s.io/gateway-api ParentReference), without its defaults.
        group: string('API group of the parent; gateway.networking.k8s.io when empty.', {
          maxLength: 253,
          pattern: '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
        }),
        kind: string('Kind of the parent; Gateway when empty.', {
          maxLength: 63,
          minLength: 1,
          pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$',
        }),
        namespace: string('Namespace of the parent; the Challenge namespace when empty.', {
          maxLength: 63,
          minLength: 1,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
        }),
        name: string('Name of the parent.', { maxLength: 253, minLength: 1 }),
        sectionName: string('Listener of the parent to attach to.', {
          maxLength: 253,
          minLength: 1,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
        }),
        port: { ...integer('Port of the parent to attach to.', 'int32'), minimum: 1, maximum: 65535 },
      },
      ['name'],
    ),
  ),
  podTemplate,
});

const http01 = object('Solve http-01 challenges; exactly one of ingress and gatewayHTTPRoute.', {
  ingress,
  gatewayHTTPRoute,
});

const secretRef = secretKeySelector;

const dns01 = object('Solve dns-01 challenges; exactly one provider.', {
  cnameStrategy: oneOf(
    'Follow: write the TXT record where a CNAME at _acme-challenge points; None (default): do not.',
    CNAME_STRATEGIES,
  ),
  nameservers: stringList(
    'Servers for this solver’s propagation check, host:port or https:// (DoH); turns the authoritative check off.',
  ),
  akamai: object(
    'Akamai Edge DNS.',
    {
      serviceConsumerDomain: string('Akamai API host.'),
      clientTokenSecretRef: secretRef('Secret key holding the client token.'),
      clientSecretSecretRef: secretRef('Secret key holding the client secret.'),
      accessTokenSecretRef: secretRef('Secret key holding the access token.'),
    },
    ['accessTokenSecretRef', 'clientSecretSecretRef', 'clientTokenSecretRef', 'serviceConsumerDomain'],
  ),
  cloudDNS: object(
    'Google Cloud DNS.',
    {
      serviceAccountSecretRef: secretRef(
        'Secret key holding a service account JSON key; ambient when absent.',
      ),
      project: string('Google Cloud project of the zone.'),
      hostedZoneName: string('Managed zone to use; found by name when empty.'),
    },
    ['project'],
  ),
  cloudflare: object('Cloudflare.', {
    email: string('Account email, with apiKeySecretRef.'),
    apiKeySecretRef: secretRef('Secret key holding a global API key (deprecated by Cloudflare).'),
    apiTokenSecretRef: secretRef('Secret key holding an API token.'),
  }),
  route53: object('AWS Route 53.', {
    auth: object(
      'Authenticate with a Kubernetes ServiceAccount token (IRSA-style web identity).',
      {
        kubernetes: object(
          'The ServiceAccount whose token is exchanged.',
          {
            serviceAccountRef: object(
              'The ServiceAccount to request a token for.',
              {
                name: string('Name of the ServiceAccount.'),
                audiences: stringList('Audiences of the token; sts.amazonaws.com when empty.'),
              },
              ['name'],
            ),
          },
          ['serviceAccountRef'],
        ),
      },
      ['kubernetes'],
    ),
    accessKeyID: string('AWS access key ID; exclusive with accessKeyIDSecretRef.'),
    accessKeyIDSecretRef: secretRef('Secret key holding the access key ID.'),
    secretAccessKeySecretRef: secretRef('Secret key holding the secret access key.'),
    role: string('IAM role to assume.'),
    hostedZoneID: string('Hosted zone to use; found by name when empty.'),
    region: string('AWS region.'),
  }),
  azureDNS: object(
    'Azure DNS.',
    {
      clientID: string('Service principal client ID; with clientSecretSecretRef and tenantID.'),
      clientSecretSecretRef: secretRef('Secret key holding the service principal secret.'),
      subscriptionID: string('Subscription of the DNS zone.'),
      tenantID: string('Tenant of the service principal.'),
      resourceGroupName: string('Resource group of the DNS zone.'),
      hostedZoneName: string('DNS zone to use.'),
      environment: oneOf('Azure cloud.', AZURE_DNS_ENVIRONMENTS),
      managedIdentity: object('Authenticate with a managed identity.', {
        clientID: string('Client ID of the managed identity.'),
        resourceID: string('Resource ID of the managed identity.'),
        tenantID: string('Tenant of the managed identity (workload identity).'),
      }),
      zoneType: oneOf('Public or private zone.', AZURE_ZONE_TYPES),
    },
    ['resourceGroupName', 'subscriptionID'],
  ),
  digitalocean: object('DigitalOcean.', { tokenSecretRef: secretRef('Secret key holding the API token.') }, [
    'tokenSecretRef',
  ]),
  acmeDNS: object(
    'acme-dns.',
    {
      host: string('URL of the acme-dns server.'),
      accountSecretRef: secretRef('Secret key holding the acme-dns account JSON.'),
    },
    ['accountSecretRef', 'host'],
  ),
  rfc2136: object(
    'RFC 2136 dynamic updates, signed with TSIG.',
    {
      nameserver: string(
        'Server to send updates to: host, host:port, [IPv6] or [IPv6]:port; port 53 by default.',
      ),
      tsigSecretSecretRef: secretRef('Secret key holding the base64 TSIG secret.'),
      tsigKeyName: string('Name of the TSIG key.'),
      tsigAlgorithm: string('HMACMD5 (default), HMACSHA1, HMACSHA256 or HMACSHA512.'),
      protocol: oneOf('Transport for updates: UDP (default) or TCP.', RFC2136_PROTOCOLS),
    },
    ['nameserver'],
  ),
  webhook: object(
    'An external webhook solver (an aggregated API server).',
    {
      groupName: string('API group of the webhook solver.'),
      solverName: string('Name of the solver within the group.'),
      // Any JSON value, as apiextensions JSON: no type, unknown fields kept.
      config: {
        description: 'Configuration passed to the webhook solver as it is.',
        'x-kubernetes-preserve-unknown-fields': true,
      },
    },
    ['groupName', 'solverName'],
  ),
});

export const acmeChallengeSolver = object(
  'A challenge solver: http01 or dns01, for the names its selector picks.',
  {
    selector: object('Which names this solver is for; without one it is the default.', {
      matchLabels: stringMap('Labels the Certificate (and so the Order) must carry.'),
      dnsNames: stringList('Names matched exactly; these win over zones and labels.'),
      dnsZones: stringList('Zones (with their subdomains) matched; the longest match wins.'),
    }),
    http01,
    dns01,
    waitInsteadOfSelfCheck: string(
      'Skip the self-check and wait this long (a Go duration) after presenting before accepting.',
    ),
  },
);

export const acmeIssuer = object(
  'Obtains certificates from an ACME (RFC 8555) server such as Let’s Encrypt.',
  {
    email: string('Email address of the ACME account.'),
    server: string("URL of the ACME server's directory endpoint."),
    preferredChain: string('Common name of the root of the chain to prefer when the server offers several.', {
      maxLength: 64,
    }),
    caBundle: bytes('PEM CA bundle to verify the ACME server with. Exclusive with skipTLSVerify.'),
    skipTLSVerify: boolean("INSECURE: do not verify the ACME server's TLS certificate."),
    externalAccountBinding: object(
      'External account credentials to bind to the ACME account.',
      {
        keyID: string('ID of the CA key the external account is bound to.'),
        keySecretRef: secretKeySelector('Secret key holding the base64url MAC key of the binding.'),
        keyAlgorithm: oneOf('Deprecated and ignored: the algorithm is always HS256.', HMAC_KEY_ALGORITHMS),
      },
      ['keyID', 'keySecretRef'],
    ),
    privateKeySecretRef: secretKeySelector('Secret that stores the ACME account private key.'),
    solvers: list('Challenge solvers, chosen per name by their selectors.', acmeChallengeSolver),
    disableAccountKeyGeneration: boolean('Expect an existing account key instead of generating one.'),
    enableDurationFeature: boolean('Ask the ACME server for a Not After matching the requested duration.'),
    profile: string('Certificate profile to request from the ACME server.'),
    renewalInformationSource: oneOf(
      'Where to get renewal information: ARI (the server; also when empty) or None.',
      RENEWAL_INFORMATION_SOURCES,
    ),
  },
  ['privateKeySecretRef', 'server'],
);
