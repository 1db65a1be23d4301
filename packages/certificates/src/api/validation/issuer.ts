/**
 * Issuer and ClusterIssuer validation as cert-manager's webhook does it
 * (internal/apis/certmanager/validation/issuer.go): exactly one issuer type, then that type's own rules.
 * selfSigned and ca are implemented by this controller and checked in full; acme, vault and venafi are
 * checked as upstream does at their top level (and ACME solvers' shape, with the rules of the rfc2136 DNS-01
 * provider certkit runs), so that manifests written for cert-manager are judged the same, without the rules of
 * DNS providers we do not run.
 */

import { X509Certificate } from 'node:crypto';
import { type FieldError, parseGoDuration } from '@certkit/apimachinery';
import type { CAIssuer, ClusterIssuer, Issuer, IssuerSpec } from '../types.ts';
import { parseRFC2136Nameserver } from '../../acme/dns01/nameserver.ts';
import { TSIG_ALGORITHMS } from '../../acme/dns01/tsig.ts';
import { forbidden, index, invalid, notSupported, required } from './errors.ts';
import { dns1123SubdomainErrors } from './formats.ts';

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
const asString = (value: unknown): string => (typeof value === 'string' ? value : '');

/** validateCABundleNotEmpty: at least one parseable certificate among the PEM blocks (x509.CertPool semantics). */
function caBundleError(base64: string): string | undefined {
  const text = Buffer.from(base64, 'base64').toString('latin1');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  for (const block of blocks) {
    try {
      new X509Certificate(block);
      return undefined;
    } catch {
      // AppendCertsFromPEM skips what it cannot parse.
    }
  }
  return "cert bundle didn't contain any valid certificates";
}

function secretKeySelectorErrors(selector: unknown, path: string): FieldError[] {
  const ref = asObject(selector);
  const errors: FieldError[] = [];
  if (!asString(ref?.name)) errors.push(required(`${path}.name`, 'secret name is required'));
  if (!asString(ref?.key)) errors.push(required(`${path}.key`, 'secret key is required'));
  return errors;
}

/** A literal `..` path segment (Vault paths are joined into URLs). */
const hasDotDotSegment = (path: string): boolean => path.split('/').includes('..');

function validateCA(ca: CAIssuer, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!ca.secretName) errors.push(required(`${path}.secretName`));
  // Upstream names this path `ocspServer`, which is not the field; we name the field.
  (ca.ocspServers ?? []).forEach((url, i) => {
    if (url === '') {
      errors.push(
        invalid(
          index(`${path}.ocspServers`, i),
          url,
          'must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org',
        ),
      );
    }
  });
  (ca.issuingCertificateURLs ?? []).forEach((url, i) => {
    if (url === '')
      errors.push(invalid(index(`${path}.issuingCertificateURLs`, i), url, 'must be a valid URL'));
  });
  return errors;
}

const DNS01_PROVIDERS = [
  'akamai',
  'azureDNS',
  'cloudDNS',
  'cloudflare',
  'route53',
  'acmeDNS',
  'digitalocean',
  'rfc2136',
  'webhook',
] as const;

function validateHTTP01(http01: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const ingress = asObject(http01.ingress);
  const gateway = asObject(http01.gatewayHTTPRoute);
  const defined = [ingress, gateway].filter(Boolean).length;
  if (defined === 0) errors.push(required(path, 'no HTTP01 solver type configured'));
  if (defined > 1) errors.push(required(path, 'only 1 HTTP01 solver type may be configured'));
  const serviceTypeError = (value: unknown, at: string) => {
    const type = asString(value);
    if (type !== '' && type !== 'ClusterIP' && type !== 'NodePort') {
      errors.push(invalid(`${at}.serviceType`, type, 'must be empty, "ClusterIP" or "NodePort"'));
    }
  };
  if (ingress) {
    const at = `${path}.ingress`;
    const specified = [
      ingress.class !== undefined,
      ingress.ingressClassName !== undefined,
      Boolean(ingress.name),
    ];
    if (specified.filter(Boolean).length > 1) {
      errors.push(forbidden(at, "only one of 'ingressClassName', 'name' or 'class' should be specified"));
    }
    if (ingress.ingressClassName !== undefined) {
      const className = asString(ingress.ingressClassName);
      const problems = dns1123SubdomainErrors(className);
      if (problems.length > 0) {
        errors.push(
          invalid(
            `${at}.ingressClassName`,
            className,
            `must be a valid IngressClass name: ${problems.join(', ')}`,
          ),
        );
      }
    }
    serviceTypeError(ingress.serviceType, at);
  }
  if (gateway) {
    // Upstream names this path `gateway`; the field is gatewayHTTPRoute.
    const at = `${path}.gatewayHTTPRoute`;
    serviceTypeError(gateway.serviceType, at);
    const parentRefs = Array.isArray(gateway.parentRefs) ? gateway.parentRefs : [];
    for (let i = 0; i < parentRefs.length; i++) {
      const ref = asObject(parentRefs[i]) ?? {};
      const refPath = index(`${at}.parentRefs`, i);
      if (ref.kind !== undefined && !asString(ref.name)) {
        errors.push(required(`${refPath}.name`, 'name is required when kind is specified'));
        break;
      }
      if (asString(ref.name) && ref.kind === undefined) {
        errors.push(required(`${refPath}.kind`, 'kind is required when name is specified'));
        break;
      }
    }
  }
  return errors;
}

/** The rfc2136 provider's rules (cert-manager's ValidateACMEChallengeSolverDNS01, the RFC2136 branch). */
function validateRFC2136(rfc2136: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const nameserver = asString(rfc2136.nameserver);
  if (nameserver === '') {
    errors.push(required(`${path}.nameserver`));
  } else {
    try {
      parseRFC2136Nameserver(nameserver);
    } catch {
      errors.push(
        invalid(
          `${path}.nameserver`,
          nameserver,
          'nameserver must be set in the form host:port where host is an IPv4 address, an enclosed IPv6 address or a hostname and port is an optional port number.',
        ),
      );
    }
  }
  // certkit also signs with HMACSHA224 and HMACSHA384 (docs/adr/1002-dns01-rfc2136-own-wire-format.md), so
  // they pass here too. Upstream reports the value as ""; we name it.
  const algorithm = asString(rfc2136.tsigAlgorithm);
  if (algorithm !== '' && !(algorithm.toUpperCase() in TSIG_ALGORITHMS)) {
    errors.push(notSupported(`${path}.tsigAlgorithm`, algorithm, Object.keys(TSIG_ALGORITHMS)));
  }
  const secretRefErrors = secretKeySelectorErrors(rfc2136.tsigSecretSecretRef, `${path}.tsigSecretSecretRef`);
  const keyName = asString(rfc2136.tsigKeyName);
  if (keyName !== '') errors.push(...secretRefErrors);
  if (secretRefErrors.length === 0 && keyName === '') errors.push(required(`${path}.tsigKeyName`));
  return errors;
}

function validateDNS01(dns01: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const strategy = asString(dns01.cnameStrategy);
  if (strategy !== '' && strategy !== 'None' && strategy !== 'Follow') {
    errors.push(invalid(`${path}.cnameStrategy`, strategy, 'must be one of "None" or "Follow"'));
  }
  let providers = 0;
  for (const provider of DNS01_PROVIDERS) {
    if (dns01[provider] === undefined || dns01[provider] === null) continue;
    if (providers > 0) {
      errors.push(forbidden(`${path}.${provider}`, 'may not specify more than one provider type'));
    } else if (provider === 'rfc2136') {
      errors.push(...validateRFC2136(asObject(dns01.rfc2136) ?? {}, `${path}.rfc2136`));
    }
    providers++;
  }
  if (providers === 0) errors.push(required(path, 'no DNS01 provider configured'));
  return errors;
}

function validateSolver(solver: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const http01 = asObject(solver.http01);
  const dns01 = asObject(solver.dns01);
  if (http01) errors.push(...validateHTTP01(http01, `${path}.http01`));
  if (dns01) {
    if (http01) errors.push(forbidden(path, 'may not specify more than one solver type in a single solver'));
    else errors.push(...validateDNS01(dns01, `${path}.dns01`));
  }
  if (!http01 && !dns01) errors.push(required(path, 'no solver type configured'));
  const wait = solver.waitInsteadOfSelfCheck;
  if (typeof wait === 'string') {
    try {
      if (parseGoDuration(wait) < 0n) {
        errors.push(
          invalid(`${path}.waitInsteadOfSelfCheck`, wait, 'waitInsteadOfSelfCheck must not be negative'),
        );
      }
    } catch (err) {
      errors.push(invalid(`${path}.waitInsteadOfSelfCheck`, wait, (err as Error).message));
    }
  }
  return errors;
}

function validateACME(acme: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const caBundle = asString(acme.caBundle);
  if (caBundle && acme.skipTLSVerify === true) {
    const detail = 'caBundle and skipTLSVerify are mutually exclusive and cannot both be set';
    errors.push(invalid(`${path}.caBundle`, '', detail));
    errors.push(invalid(`${path}.skipTLSVerify`, true, detail));
  }
  if (caBundle) {
    const problem = caBundleError(caBundle);
    if (problem) errors.push(invalid(`${path}.caBundle`, '', problem));
  }
  if (!asString(asObject(acme.privateKeySecretRef)?.name)) {
    errors.push(required(`${path}.privateKeySecretRef.name`, 'private key secret name is a required field'));
  }
  if (!asString(acme.server)) errors.push(required(`${path}.server`, 'acme server URL is a required field'));
  const eab = asObject(acme.externalAccountBinding);
  if (eab) {
    const eabPath = `${path}.externalAccountBinding`;
    if (!asString(eab.keyID)) {
      errors.push(
        required(`${eabPath}.keyID`, 'the keyID field is required when using externalAccountBinding'),
      );
    }
    errors.push(...secretKeySelectorErrors(eab.keySecretRef, `${eabPath}.keySecretRef`));
  }
  const solvers = Array.isArray(acme.solvers) ? acme.solvers : [];
  solvers.forEach((solver, i) => {
    errors.push(...validateSolver(asObject(solver) ?? {}, index(`${path}.solvers`, i)));
  });
  return errors;
}

function validateVaultAuth(auth: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  let methods = 0;
  if (auth.tokenSecretRef !== undefined) methods++;
  const appRole = asObject(auth.appRole);
  if (appRole) {
    methods++;
    if (!asString(appRole.roleId)) errors.push(required(`${path}.appRole.roleId`));
    if (!asString(asObject(appRole.secretRef)?.name)) errors.push(required(`${path}.appRole.secretRef.name`));
    if (hasDotDotSegment(asString(appRole.path))) {
      errors.push(invalid(`${path}.appRole.path`, appRole.path, "must not contain '..' path segments"));
    }
  }
  const clientCertificate = asObject(auth.clientCertificate);
  if (clientCertificate) {
    methods++;
    if (hasDotDotSegment(asString(clientCertificate.mountPath))) {
      errors.push(
        invalid(
          `${path}.clientCertificate.mountPath`,
          clientCertificate.mountPath,
          "must not contain '..' path segments",
        ),
      );
    }
  }
  const kubernetes = asObject(auth.kubernetes);
  if (kubernetes) {
    methods++;
    const at = `${path}.kubernetes`;
    if (!asString(kubernetes.role)) errors.push(required(`${at}.role`));
    if (hasDotDotSegment(asString(kubernetes.mountPath))) {
      errors.push(invalid(`${at}.mountPath`, kubernetes.mountPath, "must not contain '..' path segments"));
    }
    let sources = 0;
    if (asString(asObject(kubernetes.secretRef)?.name)) sources++;
    const serviceAccountRef = asObject(kubernetes.serviceAccountRef);
    if (serviceAccountRef) {
      sources++;
      if (!asString(serviceAccountRef.name)) errors.push(required(`${at}.serviceAccountRef.name`));
    }
    if (sources === 0) errors.push(required(at, 'please supply one of: secretRef, serviceAccountRef'));
    if (sources > 1) errors.push(forbidden(at, 'please supply one of: secretRef, serviceAccountRef'));
  }
  const aws = asObject(auth.aws);
  if (aws) {
    methods++;
    if (!asString(aws.role)) errors.push(required(`${path}.aws.role`));
    if (hasDotDotSegment(asString(aws.mountPath))) {
      errors.push(invalid(`${path}.aws.mountPath`, aws.mountPath, "must not contain '..' path segments"));
    }
    const serviceAccountRef = asObject(aws.serviceAccountRef);
    if (serviceAccountRef) {
      if (!asString(serviceAccountRef.name)) errors.push(required(`${path}.aws.serviceAccountRef.name`));
      if (!asString(aws.iamRoleArn)) {
        errors.push(
          required(`${path}.aws.iamRoleArn`, 'iamRoleArn is required when using serviceAccountRef for IRSA'),
        );
      }
    }
  }
  // Upstream never enforced "only one", and existing Issuers rely on the first set one winning.
  if (methods === 0) {
    errors.push(
      required(path, 'please supply one of: appRole, kubernetes, tokenSecretRef, clientCertificate, aws'),
    );
  }
  return errors;
}

function validateVault(vault: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!asString(vault.server)) errors.push(required(`${path}.server`));
  const vaultPath = asString(vault.path);
  if (!vaultPath) errors.push(required(`${path}.path`));
  else if (hasDotDotSegment(vaultPath)) {
    errors.push(invalid(`${path}.path`, vaultPath, "must not contain '..' path segments"));
  }
  const caBundle = asString(vault.caBundle);
  if (caBundle) {
    const problem = caBundleError(caBundle);
    if (problem) errors.push(invalid(`${path}.caBundle`, '<snip>', problem));
  }
  const caBundleSecretRef = asObject(vault.caBundleSecretRef);
  if (caBundle && caBundleSecretRef) {
    errors.push(
      invalid(
        `${path}.caBundle`,
        '<snip>',
        'specified caBundle and caBundleSecretRef cannot be used together',
      ),
    );
    errors.push(
      invalid(
        `${path}.caBundleSecretRef`,
        asString(caBundleSecretRef.name),
        'specified caBundleSecretRef and caBundle cannot be used together',
      ),
    );
  }
  const hasClientCert = vault.clientCertSecretRef !== undefined;
  const hasClientKey = vault.clientKeySecretRef !== undefined;
  if (hasClientCert && !hasClientKey) {
    errors.push(
      invalid(
        `${path}.clientKeySecretRef`,
        '<snip>',
        'clientKeySecretRef must be provided when defining the clientCertSecretRef',
      ),
    );
  } else if (!hasClientCert && hasClientKey) {
    errors.push(
      invalid(
        `${path}.clientCertSecretRef`,
        '<snip>',
        'clientCertSecretRef must be provided when defining the clientKeySecretRef',
      ),
    );
  }
  errors.push(...validateVaultAuth(asObject(vault.auth) ?? {}, `${path}.auth`));
  return errors;
}

function validateVenafi(venafi: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!asString(venafi.zone)) errors.push(required(`${path}.zone`));
  let connections = 0;
  const tpp = asObject(venafi.tpp);
  if (tpp) {
    connections++;
    if (!asString(tpp.url)) errors.push(required(`${path}.tpp.url`));
    if (asString(tpp.caBundle) && tpp.caBundleSecretRef !== undefined) {
      errors.push(
        forbidden(
          `${path}.tpp`,
          'may not specify more than one of caBundle/caBundleSecretRef as TPP CA Bundle',
        ),
      );
    }
  }
  if (asObject(venafi.cloud)) connections++;
  const ngts = asObject(venafi.ngts);
  if (ngts) {
    connections++;
    if (!asString(ngts.tsgID)) errors.push(required(`${path}.ngts.tsgID`));
    if (!asString(asObject(ngts.credentialsRef)?.name))
      errors.push(required(`${path}.ngts.credentialsRef.name`));
  }
  if (connections === 0) errors.push(required(path, 'please supply one of: tpp, cloud, ngts'));
  if (connections > 1) errors.push(forbidden(path, 'please supply one of: tpp, cloud, ngts'));
  return errors;
}

/** ValidateIssuerConfig: the first issuer type set is validated; every further one is forbidden. */
export function validateIssuerSpec(spec: IssuerSpec, path = 'spec'): FieldError[] {
  const errors: FieldError[] = [];
  const validators: [keyof IssuerSpec, (config: Json, at: string) => FieldError[]][] = [
    ['acme', validateACME],
    ['ca', (config, at) => validateCA(config as unknown as CAIssuer, at)],
    ['selfSigned', () => []],
    ['vault', validateVault],
    ['venafi', validateVenafi],
  ];
  let configured = 0;
  for (const [type, validate] of validators) {
    const config = spec[type];
    if (config === undefined || config === null) continue;
    if (configured > 0) {
      errors.push(forbidden(`${path}.${type}`, 'may not specify more than one issuer type'));
      continue;
    }
    configured++;
    errors.push(...validate(asObject(config) ?? {}, `${path}.${type}`));
  }
  if (configured === 0) errors.push(required(path, 'at least one issuer must be configured'));
  return errors;
}

/** ValidateIssuer / ValidateUpdateIssuer: the same checks on create and update. */
export function validateIssuer(issuer: Issuer, _old?: Issuer): FieldError[] {
  return validateIssuerSpec(asObject(issuer.spec) ?? {});
}

/** ValidateClusterIssuer / ValidateUpdateClusterIssuer: as Issuers. */
export function validateClusterIssuer(issuer: ClusterIssuer, _old?: ClusterIssuer): FieldError[] {
  return validateIssuerSpec(asObject(issuer.spec) ?? {});
}
