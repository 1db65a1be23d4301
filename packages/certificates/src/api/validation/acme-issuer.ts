/**
 * `IssuerSpec.acme` validation as cert-manager's webhook does it (internal/apis/certmanager/validation/issuer.go
 * ValidateACMEIssuerConfig and the solver and DNS-01 provider checks under it, and util/nameserver.go), with
 * upstream's field paths and details. Objects are read loosely (any JSON may reach admission), so every
 * field is type-checked as it is read.
 */

import {
  dns1123SubdomainErrors,
  type FieldError,
  type JsonObject,
  parseGoDuration,
  appendErrors,
} from '@certkit/apimachinery';
import { AZURE_DNS_ENVIRONMENTS, DNS01_PROVIDERS, RFC2136_TSIG_ALGORITHMS } from '../acme-constants.ts';
import { asObject, asString } from './values.ts';
import { forbidden, index, invalid, notSupported, required } from './errors.ts';
import { caBundleError } from './formats.ts';
import { dns01NameserverError, rfc2136Nameserver } from './nameserver.ts';

type Json = JsonObject;
/** A Go pointer field: set when present, whatever its value. */
const isSet = (value: unknown): boolean => value !== undefined && value !== null;

/** ValidateSecretKeySelector: both name and key are required wherever a whole selector is validated. */
export function secretKeySelectorErrors(selector: unknown, path: string): FieldError[] {
  const ref = asObject(selector);
  const errors: FieldError[] = [];
  if (!asString(ref?.name)) errors.push(required(`${path}.name`, 'secret name is required'));
  if (!asString(ref?.key)) errors.push(required(`${path}.key`, 'secret key is required'));
  return errors;
}

function serviceTypeErrors(value: unknown, path: string): FieldError[] {
  const type = asString(value);
  if (type === '' || type === 'ClusterIP' || type === 'NodePort') return [];
  return [invalid(`${path}.serviceType`, type, 'must be empty, "ClusterIP" or "NodePort"')];
}

function ingressErrors(ingress: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const specified = [isSet(ingress.class), isSet(ingress.ingressClassName), Boolean(asString(ingress.name))];
  if (specified.filter(Boolean).length > 1) {
    errors.push(forbidden(path, "only one of 'ingressClassName', 'name' or 'class' should be specified"));
  }
  // ingressClassName names a resource, so it is held to resource-name rules (class was always free text).
  if (isSet(ingress.ingressClassName)) {
    const className = asString(ingress.ingressClassName);
    const problems = dns1123SubdomainErrors(className);
    if (problems.length > 0) {
      errors.push(
        invalid(
          `${path}.ingressClassName`,
          className,
          `must be a valid IngressClass name: ${problems.join(', ')}`,
        ),
      );
    }
  }
  appendErrors(errors, serviceTypeErrors(ingress.serviceType, path));
  return errors;
}

function gatewayErrors(gateway: Json, path: string): FieldError[] {
  const errors = serviceTypeErrors(gateway.serviceType, path);
  // parentRefs may be empty (annotations can supply them); a ref needs both kind and name, and upstream
  // stops at the first incomplete one.
  const parentRefs = Array.isArray(gateway.parentRefs) ? gateway.parentRefs : [];
  for (let i = 0; i < parentRefs.length; i++) {
    const ref = asObject(parentRefs[i]) ?? {};
    const refPath = index(`${path}.parentRefs`, i);
    if (isSet(ref.kind) && !asString(ref.name)) {
      errors.push(required(`${refPath}.name`, 'name is required when kind is specified'));
      break;
    }
    if (asString(ref.name) && !isSet(ref.kind)) {
      errors.push(required(`${refPath}.kind`, 'kind is required when name is specified'));
      break;
    }
  }
  return errors;
}

function http01Errors(http01: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const ingress = asObject(http01.ingress);
  const gateway = asObject(http01.gatewayHTTPRoute);
  if (ingress) appendErrors(errors, ingressErrors(ingress, `${path}.ingress`));
  // Upstream names this path `gateway`; we name the field, gatewayHTTPRoute.
  if (gateway) appendErrors(errors, gatewayErrors(gateway, `${path}.gatewayHTTPRoute`));
  const defined = [ingress, gateway].filter(Boolean).length;
  if (defined === 0) errors.push(required(path, 'no HTTP01 solver type configured'));
  if (defined > 1) errors.push(required(path, 'only 1 HTTP01 solver type may be configured'));
  return errors;
}

type ProviderCheck = (provider: Json, path: string) => FieldError[];

const PROVIDER_CHECKS: Record<string, ProviderCheck> = {
  // Upstream names these paths accessToken, clientSecret and clientToken; we name the fields.
  akamai: (p, at) => [
    ...secretKeySelectorErrors(p.accessTokenSecretRef, `${at}.accessTokenSecretRef`),
    ...secretKeySelectorErrors(p.clientSecretSecretRef, `${at}.clientSecretSecretRef`),
    ...secretKeySelectorErrors(p.clientTokenSecretRef, `${at}.clientTokenSecretRef`),
    ...(asString(p.serviceConsumerDomain) ? [] : [required(`${at}.serviceConsumerDomain`)]),
  ],
  azureDNS: (p, at) => {
    const errors: FieldError[] = [];
    const identity = asObject(p.managedIdentity);
    if (asString(p.clientID) || asString(p.tenantID) || isSet(p.clientSecretSecretRef)) {
      if (!asString(p.clientID)) errors.push(required(`${at}.clientID`));
      if (!isSet(p.clientSecretSecretRef)) errors.push(required(`${at}.clientSecretSecretRef`));
      else
        appendErrors(errors, secretKeySelectorErrors(p.clientSecretSecretRef, `${at}.clientSecretSecretRef`));
      if (!asString(p.tenantID)) errors.push(required(`${at}.tenantID`));
      if (isSet(p.managedIdentity)) {
        errors.push(
          forbidden(
            `${at}.managedIdentity`,
            'managed identity cannot be used at the same time as clientID, clientSecretSecretRef or tenantID',
          ),
        );
      }
    } else if (identity) {
      const [clientID, resourceID, tenantID] = [
        identity.clientID,
        identity.resourceID,
        identity.tenantID,
      ].map(asString);
      if (clientID && resourceID) {
        errors.push(
          forbidden(
            `${at}.managedIdentity`,
            'managedIdentityClientID and managedIdentityResourceID cannot both be specified',
          ),
        );
      }
      if (tenantID && resourceID) {
        errors.push(
          forbidden(
            `${at}.managedIdentity`,
            'managedIdentityTenantID and managedIdentityResourceID cannot both be specified',
          ),
        );
      }
      if (tenantID && !clientID) {
        errors.push(
          required(
            `${at}.managedIdentity`,
            'managedIdentityClientID is required when using managedIdentityTenantID',
          ),
        );
      }
    }
    if (!asString(p.subscriptionID)) errors.push(required(`${at}.subscriptionID`));
    if (!asString(p.resourceGroupName)) errors.push(required(`${at}.resourceGroupName`));
    const environment = asString(p.environment);
    if (environment !== '' && !(AZURE_DNS_ENVIRONMENTS as readonly string[]).includes(environment)) {
      errors.push(
        invalid(
          `${at}.environment`,
          environment,
          'must be either empty or one of AzurePublicCloud, AzureChinaCloud, AzureGermanCloud, or AzureUSGovernmentCloud',
        ),
      );
    }
    return errors;
  },
  cloudDNS: (p, at) => [
    ...(isSet(p.serviceAccountSecretRef)
      ? secretKeySelectorErrors(p.serviceAccountSecretRef, `${at}.serviceAccountSecretRef`)
      : []),
    ...(asString(p.project) ? [] : [required(`${at}.project`)]),
  ],
  cloudflare: (p, at) => {
    const errors: FieldError[] = [];
    const hasKey = isSet(p.apiKeySecretRef);
    const hasToken = isSet(p.apiTokenSecretRef);
    if (hasKey) appendErrors(errors, secretKeySelectorErrors(p.apiKeySecretRef, `${at}.apiKeySecretRef`));
    if (hasToken)
      appendErrors(errors, secretKeySelectorErrors(p.apiTokenSecretRef, `${at}.apiTokenSecretRef`));
    if (hasKey && hasToken) {
      errors.push(forbidden(at, 'apiKeySecretRef and apiTokenSecretRef cannot both be specified'));
    }
    if (!hasKey && !hasToken) errors.push(required(at, 'apiKeySecretRef or apiTokenSecretRef is required'));
    if (!asString(p.email) && hasKey) errors.push(required(`${at}.email`));
    return errors;
  },
  route53: (p, at) => {
    const errors: FieldError[] = [];
    // Neither key is required: ambient credentials are valid.
    if (asString(p.accessKeyID) && isSet(p.accessKeyIDSecretRef)) {
      errors.push(required(at, 'accessKeyID and accessKeyIDSecretRef cannot both be specified'));
    }
    if (isSet(p.accessKeyIDSecretRef)) {
      appendErrors(errors, secretKeySelectorErrors(p.accessKeyIDSecretRef, `${at}.accessKeyIDSecretRef`));
    }
    return errors;
  },
  acmeDNS: (p, at) => [
    ...secretKeySelectorErrors(p.accountSecretRef, `${at}.accountSecretRef`),
    ...(asString(p.host) ? [] : [required(`${at}.host`)]),
  ],
  digitalocean: (p, at) => secretKeySelectorErrors(p.tokenSecretRef, `${at}.tokenSecretRef`),
  rfc2136: (p, at) => {
    const errors: FieldError[] = [];
    const nameserver = asString(p.nameserver);
    if (nameserver === '') errors.push(required(`${at}.nameserver`));
    else if ('error' in rfc2136Nameserver(nameserver)) {
      errors.push(
        invalid(
          `${at}.nameserver`,
          nameserver,
          'nameserver must be set in the form host:port where host is an IPv4 address, an enclosed IPv6 address or a hostname and port is an optional port number.',
        ),
      );
    }
    const algorithm = asString(p.tsigAlgorithm);
    if (algorithm && !(RFC2136_TSIG_ALGORITHMS as readonly string[]).includes(algorithm.toUpperCase())) {
      // Upstream reports the value as empty.
      errors.push(notSupported(`${at}.tsigAlgorithm`, '', RFC2136_TSIG_ALGORITHMS));
    }
    const secretErrors = secretKeySelectorErrors(p.tsigSecretSecretRef, `${at}.tsigSecretSecretRef`);
    const keyName = asString(p.tsigKeyName);
    if (keyName) appendErrors(errors, secretErrors);
    if (secretErrors.length === 0 && !keyName) errors.push(required(`${at}.tsigKeyName`));
    return errors;
  },
  webhook: (p, at) =>
    asString(p.solverName) ? [] : [required(`${at}.solverName`, 'solver name must be specified')],
};

/**
 * Providers counted without the "more than one" check, as upstream: akamai comes first anyway, and acmeDNS
 * was never given the check, so acmeDNS next to another provider is accepted (the first one set is used).
 */
const UNCHECKED_PROVIDERS = new Set(['akamai', 'acmeDNS']);

/** ValidateACMEChallengeSolverDNS01. */
export function dns01Errors(dns01: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const strategy = asString(dns01.cnameStrategy);
  if (strategy !== '' && strategy !== 'None' && strategy !== 'Follow') {
    errors.push(invalid(`${path}.cnameStrategy`, strategy, 'must be one of "None" or "Follow"'));
  }
  const nameservers = Array.isArray(dns01.nameservers) ? dns01.nameservers : [];
  nameservers.forEach((ns, i) => {
    const problem = dns01NameserverError(asString(ns));
    if (problem) errors.push(invalid(index(`${path}.nameservers`, i), ns, problem));
  });
  let providers = 0;
  for (const name of DNS01_PROVIDERS) {
    if (!isSet(dns01[name])) continue;
    if (providers > 0 && !UNCHECKED_PROVIDERS.has(name)) {
      errors.push(forbidden(`${path}.${name}`, 'may not specify more than one provider type'));
      continue;
    }
    providers++;
    appendErrors(errors, PROVIDER_CHECKS[name](asObject(dns01[name]) ?? {}, `${path}.${name}`));
  }
  if (providers === 0) errors.push(required(path, 'no DNS01 provider configured'));
  return errors;
}

/** ValidateACMEIssuerChallengeSolverConfig: exactly one of http01 and dns01, and a non-negative wait. */
export function solverErrors(solver: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const http01 = asObject(solver.http01);
  const dns01 = asObject(solver.dns01);
  if (http01) appendErrors(errors, http01Errors(http01, `${path}.http01`));
  if (dns01) {
    if (http01) errors.push(forbidden(path, 'may not specify more than one solver type in a single solver'));
    else appendErrors(errors, dns01Errors(dns01, `${path}.dns01`));
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

/**
 * ValidateACMEIssuerConfig. Upstream also warns when externalAccountBinding.keyAlgorithm is set (it is
 * ignored); admission here answers errors only, so that warning is not sent.
 */
export function validateACMEIssuer(acme: Json, path: string): FieldError[] {
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
    appendErrors(errors, secretKeySelectorErrors(eab.keySecretRef, `${eabPath}.keySecretRef`));
  }
  const solvers = Array.isArray(acme.solvers) ? acme.solvers : [];
  solvers.forEach((solver, i) => {
    appendErrors(errors, solverErrors(asObject(solver) ?? {}, index(`${path}.solvers`, i)));
  });
  return errors;
}
