/**
 * The Issuer and ClusterIssuer schema (types_issuer.go). selfSigned, ca, vault and venafi are spelled out
 * field by field here, acme in ./acme-issuer.ts. No defaults: the stored object is what the user wrote.
 */

import { acmeIssuer as acme } from './acme-issuer.ts';
import {
  bytes,
  conditions,
  localObjectReference,
  object,
  resource,
  type Schema,
  secretKeySelector,
  serviceAccountRef,
  string,
  stringList,
} from './builders.ts';

const selfSigned = object('Self-signs each request with its own private key.', {
  crlDistributionPoints: stringList('CRL distribution point URLs to put in issued certificates.'),
});

const ca = object(
  'Signs with a CA key pair stored in a Secret.',
  {
    secretName: string(
      "Secret holding the signing CA as tls.crt and tls.key: in the Issuer's namespace, or the cluster resource namespace for a ClusterIssuer.",
    ),
    crlDistributionPoints: stringList('CRL distribution point URLs to put in issued certificates.'),
    ocspServers: stringList('OCSP server URLs to put in issued certificates.'),
    issuingCertificateURLs: stringList(
      'URLs of the issuing certificate to put in issued certificates (AIA).',
    ),
  },
  ['secretName'],
);

const vaultAuth = object('How to authenticate with Vault; the first method set is used.', {
  tokenSecretRef: secretKeySelector('Secret key holding a Vault token.'),
  appRole: object(
    'AppRole authentication.',
    {
      path: string('Mount path of the AppRole auth backend, e.g. approle.'),
      roleId: string('The AppRole role ID.'),
      secretRef: secretKeySelector('Secret key holding the AppRole secret ID.'),
    },
    ['path', 'roleId', 'secretRef'],
  ),
  clientCertificate: object('TLS client certificate authentication.', {
    mountPath: string('Mount path of the cert auth backend. Defaults to /v1/auth/cert.'),
    name: string('Name of the certificate role to authenticate against.'),
    secretName: string('kubernetes.io/tls Secret with the client certificate and key.'),
  }),
  kubernetes: object(
    'Kubernetes service account authentication.',
    {
      mountPath: string('Mount path of the Kubernetes auth backend. Defaults to /v1/auth/kubernetes.'),
      role: string('Vault role to authenticate as.'),
      secretRef: secretKeySelector(
        'Secret key holding a service account token. Exclusive with serviceAccountRef.',
      ),
      serviceAccountRef: serviceAccountRef(
        'ServiceAccount to request a token for. Exclusive with secretRef.',
      ),
    },
    ['role'],
  ),
  aws: object(
    'AWS IAM authentication.',
    {
      mountPath: string('Mount path of the AWS auth backend. Defaults to aws.'),
      role: string('Vault role to authenticate as.', { minLength: 1 }),
      region: string('AWS region of the STS endpoint.'),
      serviceAccountRef: serviceAccountRef(
        'ServiceAccount whose token is exchanged for AWS credentials (IRSA).',
      ),
      iamRoleArn: string('IAM role to assume with the service account token.'),
      vaultHeaderValue: string('Value of the X-Vault-AWS-IAM-Server-ID header.'),
    },
    ['role'],
  ),
});

const vault = object(
  'Signs with a HashiCorp Vault PKI backend. Not implemented by this controller.',
  {
    auth: vaultAuth,
    server: string('URL of the Vault server.'),
    serverName: string("Server name to verify the Vault server's TLS certificate against (SNI)."),
    path: string('Path of the Vault PKI signing endpoint, e.g. my_pki_mount/sign/my-role-name.'),
    namespace: string('Vault Enterprise namespace.'),
    caBundle: bytes('PEM CA bundle to verify the Vault server with. Exclusive with caBundleSecretRef.'),
    caBundleSecretRef: secretKeySelector('Secret key holding the CA bundle. Exclusive with caBundle.'),
    clientCertSecretRef: secretKeySelector('Secret key holding a client certificate for mTLS.'),
    clientKeySecretRef: secretKeySelector('Secret key holding the client key for mTLS.'),
  },
  ['auth', 'path', 'server'],
);

const venafi = {
  ...object(
    'Signs with CyberArk Certificate Manager (Venafi). Not implemented by this controller.',
    {
      zone: string('The policy zone (folder or application) requests go to.'),
      tpp: object(
        'Self-hosted (TPP) connection.',
        {
          url: string('URL of the TPP instance.'),
          credentialsRef: localObjectReference('Secret holding the TPP credentials.'),
          caBundle: bytes('PEM CA bundle to verify the TPP server with.'),
          caBundleSecretRef: secretKeySelector('Secret key holding the CA bundle. Exclusive with caBundle.'),
        },
        ['credentialsRef', 'url'],
      ),
      cloud: object(
        'SaaS connection.',
        {
          url: string('URL of the SaaS API.'),
          apiTokenSecretRef: secretKeySelector('Secret key holding the API token.'),
        },
        ['apiTokenSecretRef'],
      ),
      ngts: object(
        'Next-generation trust security connection.',
        {
          url: string('URL of the NGTS API.'),
          tokenEndpoint: string('OAuth token endpoint.'),
          tsgID: string('Tenant service group ID.'),
          credentialsRef: localObjectReference('Secret holding the client credentials.'),
        },
        ['credentialsRef', 'tsgID'],
      ),
    },
    ['zone'],
  ),
  // As cert-manager's CRD; kube-apiserver evaluates it, our server does not (validation.ts does instead).
  'x-kubernetes-validations': [
    {
      message: 'exactly one of tpp, cloud, or ngts must be configured',
      rule: '(has(self.tpp) ? 1 : 0) + (has(self.cloud) ? 1 : 0) + (has(self.ngts) ? 1 : 0) == 1',
    },
  ],
} satisfies Schema;

const spec = object('Configuration of the issuer; exactly one issuer type must be set.', {
  acme,
  ca,
  vault,
  selfSigned,
  venafi,
});

const status = object('Observed state of the issuer.', {
  conditions: conditions('Conditions of the issuer; the known type is Ready.', true),
  acme: object('ACME account state.', {
    uri: string('URI of the registered ACME account.'),
    lastRegisteredEmail: string('Email address last registered with the ACME server.'),
    lastPrivateKeyHash: string('Hash of the account key last registered.'),
  }),
});

export const issuerSchema: Schema = resource(
  'An Issuer signs CertificateRequests in its own namespace.',
  spec,
  status,
  ['spec'],
);

export const clusterIssuerSchema: Schema = resource(
  'A ClusterIssuer signs CertificateRequests in any namespace; its Secrets live in the cluster resource namespace.',
  spec,
  status,
  ['spec'],
);
