/**
 * CertificateSigningRequests (certificates.k8s.io/v1), as kube-apiserver serves them: the requester's
 * identity written into the spec on create, a spec that never changes after, the `approval` subresource
 * that alone adds Approved or Denied conditions (`kubectl certificate approve|deny`), and the `status`
 * subresource through which a signer writes the certificate (once) and other conditions.
 */

import { formatTime, type FieldError, GoSyntax, jsonEqual, type StoredObject } from '@certkit/apimachinery';
import { ageColumn, humanAge, nameColumn } from '../printing.ts';
import { dns1123LabelErrors } from '@certkit/apimachinery';
import { age, builtin } from './builtin.ts';
import { certificateRequestError, issuedCertificateError } from './csr-request.ts';
import { invalid, required, unsupported } from './kind-validation.ts';

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

interface CsrSpec {
  request?: string;
  signerName?: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

interface CsrStatus {
  conditions?: Condition[];
  certificate?: string;
}

const specOf = (obj: StoredObject) => (obj.spec ??= {}) as CsrSpec;
const statusOf = (obj: StoredObject) => (obj.status ?? {}) as CsrStatus;
const conditionsOf = (obj: StoredObject) => statusOf(obj).conditions ?? [];

const KEY_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];
const TRUE_ONLY = ['Approved', 'Denied', 'Failed'];
const APPROVAL = ['Approved', 'Denied'];

/** A []byte printed with %#v, as kube shows spec.request in its error. */
function goBytes(bytes: Buffer): GoSyntax {
  return new GoSyntax(`[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(', ')}}`);
}

/** CONDITION: Approved/Denied/Pending, then Failed and Issued (kubectl's extractCSRStatus). */
function conditionCell(obj: StoredObject): string {
  const types = new Set(conditionsOf(obj).map((c) => c.type));
  let cell = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) cell += ',Failed';
  if (statusOf(obj).certificate) cell += ',Issued';
  return cell;
}

/** How kubectl prints a requested duration (duration.HumanDuration, as ages are printed). */
function humanDuration(seconds: number | undefined): string {
  return seconds === undefined ? '<none>' : humanAge(new Date(0).toISOString(), seconds * 1000);
}

/** ValidateSignerName: a DNS domain of two labels or more, one `/`, then a path of DNS labels. */
function validateSignerName(name: string | undefined, errs: FieldError[]): void {
  const field = 'spec.signerName';
  if (!name) {
    errs.push(required(field));
    return;
  }
  const segments = name.split('/');
  if (segments.length !== 2) {
    errs.push(
      invalid(field, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    );
    return;
  }
  const [domain, path] = segments;
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const problems = dns1123LabelErrors(label);
    if (problems.length > 0) {
      for (const msg of problems)
        errs.push(invalid(field, domain, `validating label ${JSON.stringify(label)}: ${msg}`));
      break;
    }
  }
  if (domainLabels.length < 2) {
    errs.push(invalid(field, domain, 'should be a domain with at least two segments separated by dots'));
  }
  for (const label of path.split('.')) {
    const problems = dns1123LabelErrors(label);
    if (problems.length > 0) {
      for (const msg of problems)
        errs.push(invalid(field, path, `validating label ${JSON.stringify(label)}: ${msg}`));
      break;
    }
  }
}

function validateConditions(obj: StoredObject, old: StoredObject | undefined, errs: FieldError[]): void {
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  // Problems the stored object already has are tolerated, as kube does for data written before its checks.
  const oldConditions = old ? conditionsOf(old) : [];
  const oldTypes = oldConditions.map((c) => c.type ?? '');
  const tolerateBoth = oldTypes.includes('Approved') && oldTypes.includes('Denied');
  const tolerateDuplicates = new Set(oldTypes).size !== oldTypes.length;
  conditionsOf(obj).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    if (!c.type && !oldTypes.includes('')) errs.push(required(`${at}.type`));
    const allowed = TRUE_ONLY.includes(c.type ?? '') ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(required(`${at}.status`));
    else if (!allowed.includes(c.status)) errs.push(unsupported(`${at}.status`, c.status, allowed));
    if (!tolerateBoth) {
      if (c.type === 'Approved') {
        approved = true;
        if (denied)
          errs.push(invalid(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === 'Denied') {
        denied = true;
        if (approved)
          errs.push(invalid(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!tolerateDuplicates && seen.has(c.type ?? '')) {
      errs.push({ type: 'FieldValueDuplicate', field: `${at}.type`, value: c.type ?? '' });
    }
    seen.add(c.type ?? '');
  });
}

/**
 * Conditions as Go compares them (apiequality.Semantic): times as instants, so that a client writing back a
 * condition with its times in another form (`+00:00` for `Z`, as the Python client does) changes nothing.
 */
function comparable(conditions: Condition[]): Condition[] {
  const instant = (t: string | undefined) => (t === undefined ? undefined : String(Date.parse(t)));
  return conditions.map((c) => ({
    ...c,
    lastUpdateTime: instant(c.lastUpdateTime),
    lastTransitionTime: instant(c.lastTransitionTime),
  }));
}

/** The update rules of validateCertificateSigningRequestUpdate, for the write's subresource. */
function validateUpdate(
  obj: StoredObject,
  old: StoredObject,
  subresource: string | undefined,
  errs: FieldError[],
): void {
  const count = (o: StoredObject, type: string) => conditionsOf(o).filter((c) => c.type === type);
  for (const type of TRUE_ONLY) {
    if (count(obj, type).length < count(old, type).length) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'status.conditions',
        detail: `updates may not remove a condition of type ${JSON.stringify(type)}`,
      });
    }
  }
  if (subresource !== 'approval') {
    for (const type of APPROVAL) {
      const before = count(old, type);
      const after = count(obj, type);
      if (after.length > before.length) {
        errs.push({
          type: 'FieldValueForbidden',
          field: 'status.conditions',
          detail: `updates may not add a condition of type ${JSON.stringify(type)}`,
        });
      } else if (after.length === before.length && !jsonEqual(comparable(after), comparable(before))) {
        errs.push({
          type: 'FieldValueForbidden',
          field: 'status.conditions',
          detail: `updates may not modify a condition of type ${JSON.stringify(type)}`,
        });
      }
    }
  }
  const certificate = statusOf(obj).certificate ?? '';
  const oldCertificate = statusOf(old).certificate ?? '';
  if (certificate !== oldCertificate) {
    if (subresource !== 'status') {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'status.certificate',
        detail: 'updates may not set certificate content',
      });
    } else if (oldCertificate) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'status.certificate',
        detail: 'updates may not modify existing certificate content',
      });
    }
  }
}

/** Fills the times a client left out of its conditions (populateConditionTimestamps). */
function stampConditions(obj: StoredObject, old: StoredObject | undefined): void {
  const now = formatTime(new Date());
  for (const c of conditionsOf(obj)) {
    c.lastUpdateTime ||= now;
    if (!c.lastTransitionTime) {
      const same = old
        ? conditionsOf(old).find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime)
        : undefined;
      c.lastTransitionTime = same?.lastTransitionTime ?? c.lastUpdateTime;
    }
  }
}

export const certificatesigningrequests = builtin({
  group: 'certificates.k8s.io',
  resource: 'certificatesigningrequests',
  model: 'V1CertificateSigningRequest',
  singular: 'certificatesigningrequest',
  kind: 'CertificateSigningRequest',
  namespaced: false,
  shortNames: ['csr'],
  statusSubresource: true,
  statusLikeSubresources: ['approval'],
  selectableFields: ['spec.signerName'],
  fieldValues: (obj) => ({ 'spec.signerName': specOf(obj).signerName ?? '' }),
  columns: [
    nameColumn,
    ageColumn,
    { name: 'SignerName', type: 'string', description: 'Name of the signer that will sign the certificate.' },
    { name: 'Requestor', type: 'string', description: 'Name of the user who requested the CSR.' },
    { name: 'RequestedDuration', type: 'string', description: 'The requested duration of the certificate.' },
    {
      name: 'Condition',
      type: 'string',
      description: 'The status of the CSR: approved, denied, failed, issued.',
    },
  ],
  cells(obj, now) {
    const spec = specOf(obj);
    return [
      obj.metadata.name,
      age(obj, now),
      spec.signerName ?? '',
      spec.username ?? '',
      humanDuration(spec.expirationSeconds),
      conditionCell(obj),
    ];
  },
  setRequester(obj, user) {
    // PrepareForCreate: who asked is the server's to say, whatever the client wrote.
    const spec = specOf(obj);
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    if (!user) return;
    spec.username = user.name;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length) spec.groups = [...user.groups];
    // extra is filled by authenticators that know more (ServiceAccount tokens, impersonation).
    const extra = (user as { extra?: Record<string, string[]> }).extra;
    if (extra && Object.keys(extra).length) spec.extra = structuredClone(extra);
  },
  onCreate(obj) {
    obj.status = {};
  },
  admit(obj, _version, old) {
    // The main resource changes metadata only: spec and status stay as stored (PrepareForUpdate).
    if (old) {
      obj.spec = old.spec;
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    }
    return [];
  },
  admitStatus(obj, _version, old) {
    // Status and approval writes alike: times the client left out of its conditions are filled.
    if (old) stampConditions(obj, old);
    return [];
  },
  subresourceAdmit(obj, old, subresource) {
    if (subresource === 'approval') {
      // The approval subresource writes conditions only.
      const status = (obj.status ??= {}) as CsrStatus;
      const certificate = statusOf(old).certificate;
      if (certificate === undefined) delete status.certificate;
      else status.certificate = certificate;
    }
    const errs: FieldError[] = [];
    validateUpdate(obj, old, subresource, errs);
    return errs;
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const spec = specOf(obj);
    const request = Buffer.from(spec.request ?? '', 'base64');
    const requestError = certificateRequestError(request.toString('latin1'));
    if (requestError) errs.push(invalid('spec.request', goBytes(request), requestError));
    if (!spec.usages?.length) errs.push(required('spec.usages'));
    const usages = new Set<string>();
    (spec.usages ?? []).forEach((usage, i) => {
      if (!KEY_USAGES.includes(usage)) errs.push(unsupported(`spec.usages[${i}]`, usage, KEY_USAGES));
      if (usages.has(usage))
        errs.push({ type: 'FieldValueDuplicate', field: `spec.usages[${i}]`, value: usage });
      usages.add(usage);
    });
    if (spec.signerName === 'kubernetes.io/legacy-unknown') {
      errs.push(
        invalid(
          'spec.signerName',
          spec.signerName,
          'the legacy signerName is not allowed via this API version',
        ),
      );
    } else validateSignerName(spec.signerName, errs);
    if (spec.expirationSeconds !== undefined && spec.expirationSeconds < 600) {
      errs.push(
        invalid(
          'spec.expirationSeconds',
          spec.expirationSeconds,
          'may not specify a duration less than 600 seconds (10 minutes)',
        ),
      );
    }
    validateConditions(obj, old, errs);
    const certificate = statusOf(obj).certificate;
    if (certificate && certificate !== (old ? statusOf(old).certificate : undefined)) {
      const problem = issuedCertificateError(Buffer.from(certificate, 'base64').toString('latin1'));
      if (problem) errs.push(invalid('status.certificate', '<certificate data>', problem));
    }
    return errs;
  },
});
