/**
 * Issuer and ClusterIssuer validation as cert-manager's webhook does it
 * (internal/apis/certmanager/validation/issuer.go): exactly one issuer type, then that type's own rules.
 * Every type is checked as upstream checks it, so that manifests written for cert-manager are judged the
 * same; acme's rules (solvers and DNS-01 providers included) are in ./acme-issuer.ts.
 */

import type { FieldError, JsonObject } from '@certkit/apimachinery';
import type { CAIssuer, ClusterIssuer, Issuer, IssuerSpec } from '../types.ts';
import { asObject, asString } from './values.ts';
import { forbidden, index, invalid, required } from './errors.ts';
import { validateACMEIssuer } from './acme-issuer.ts';
import { caBundleError } from './formats.ts';
import { appendErrors } from '@certkit/apimachinery';

type Json = JsonObject;

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
  appendErrors(errors, validateVaultAuth(asObject(vault.auth) ?? {}, `${path}.auth`));
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
    ['acme', validateACMEIssuer],
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
    appendErrors(errors, validate(asObject(config) ?? {}, `${path}.${type}`));
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
