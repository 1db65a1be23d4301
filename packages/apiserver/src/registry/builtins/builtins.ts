import type { FieldError, KubeObject, StoredObject } from '@certkit/apimachinery';
import { prepareNewCrd } from '../crd/lifecycle.ts';
import { validateCustomResourceDefinition } from '../crd/validation.ts';
import { smpSchemaFor } from '../patch/strategic-merge-patch.ts';
import { ALL_VERBS, ageColumn, humanAge, nameColumn, type ResourceDefinition } from './resource.ts';
import { base64Size, configMapKey, isBase64 } from './validation.ts';

/** The built-in resources certkit serves, with kube-apiserver's names, columns and validation. */

function age(obj: StoredObject, now: number): string {
  return humanAge(obj.metadata.creationTimestamp, now);
}

function builtin(
  partial: Pick<ResourceDefinition, 'resource' | 'singular' | 'kind' | 'namespaced' | 'columns' | 'cells'> &
    Partial<ResourceDefinition>,
): ResourceDefinition {
  return {
    group: '',
    versions: ['v1'],
    listKind: `${partial.kind}List`,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    statusSubresource: false,
    tracksGeneration: false,
    allowUnconditionalUpdate: true,
    custom: false,
    selectableFields: [],
    strategicMerge: smpSchemaFor(partial.kind),
    ...partial,
  };
}

const MAX_SECRET_BYTES = 1024 * 1024;

function validateDataMap(
  data: unknown,
  field: string,
  errs: FieldError[],
  values: 'base64' | 'string',
): number {
  if (data === undefined || data === null) return 0;
  if (typeof data !== 'object' || Array.isArray(data)) {
    errs.push({ type: 'FieldValueTypeInvalid', field, value: data, detail: 'must be an object' });
    return 0;
  }
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const msg of configMapKey(key))
      errs.push({ type: 'FieldValueInvalid', field, value: key, detail: msg });
    if (typeof value !== 'string') {
      errs.push({
        type: 'FieldValueTypeInvalid',
        field: `${field}[${key}]`,
        value,
        detail: 'must be a string',
      });
    } else if (values === 'base64') {
      if (!isBase64(value)) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${field}[${key}]`,
          value: '<value omitted>',
          detail: 'illegal base64 data',
        });
      }
      size += base64Size(value);
    } else {
      size += Buffer.byteLength(value);
    }
  }
  return size;
}

function immutableData(obj: StoredObject, old: StoredObject | undefined, fields: string[]): FieldError[] {
  if (!old || old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'immutable',
      detail: 'field is immutable when `immutable` is set',
    });
  }
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      errs.push({
        type: 'FieldValueForbidden',
        field: f,
        detail: 'field is immutable when `immutable` is set',
      });
    }
  }
  return errs;
}

/** Secret type requirements kube-apiserver enforces (pkg/apis/core/validation ValidateSecret). */
const requiredSecretKeys: Record<string, string[]> = {
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/basic-auth': [],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
};

export const secrets = builtin({
  resource: 'secrets',
  model: 'V1Secret',
  singular: 'secret',
  kind: 'Secret',
  namespaced: true,
  selectableFields: ['type'],
  columns: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.' },
    { name: 'Data', type: 'string', description: 'The number of keys in the secret.' },
    ageColumn,
  ],
  cells: (obj, now) => [
    obj.metadata.name,
    obj.type ?? '',
    Object.keys((obj.data as object) ?? {}).length,
    age(obj, now),
  ],
  fieldValues: (obj) => ({ type: String(obj.type ?? '') }),
  normalize(obj: KubeObject) {
    // stringData is write-only: merged into data (base64) and never stored, as kube-apiserver does.
    const stringData = obj.stringData;
    if (stringData && typeof stringData === 'object' && !Array.isArray(stringData)) {
      const data = { ...((obj.data as Record<string, string>) ?? {}) };
      for (const [k, v] of Object.entries(stringData)) {
        if (typeof v === 'string') data[k] = Buffer.from(v).toString('base64');
      }
      obj.data = data;
    }
    delete obj.stringData;
  },
  defaults(obj) {
    if (!obj.type) obj.type = 'Opaque';
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const size = validateDataMap(obj.data, 'data', errs, 'base64');
    if (size > MAX_SECRET_BYTES) {
      errs.push({
        type: 'FieldValueTooLong',
        field: 'data',
        detail: `Too long: may not be more than ${MAX_SECRET_BYTES} bytes`,
      });
    }
    const type = String(obj.type ?? 'Opaque');
    const data = (obj.data as Record<string, string>) ?? {};
    for (const key of requiredSecretKeys[type] ?? []) {
      if (!(key in data)) errs.push({ type: 'FieldValueRequired', field: `data[${key}]` });
    }
    if (old && (old.type ?? 'Opaque') !== type) {
      errs.push({ type: 'FieldValueInvalid', field: 'type', value: type, detail: 'field is immutable' });
    }
    errs.push(...immutableData(obj, old, ['data']));
    return errs;
  },
});

export const configmaps = builtin({
  resource: 'configmaps',
  model: 'V1ConfigMap',
  singular: 'configmap',
  kind: 'ConfigMap',
  namespaced: true,
  shortNames: ['cm'],
  columns: [nameColumn, { name: 'Data', type: 'string', description: 'Number of data keys.' }, ageColumn],
  cells: (obj, now) => [
    obj.metadata.name,
    Object.keys((obj.data as object) ?? {}).length + Object.keys((obj.binaryData as object) ?? {}).length,
    age(obj, now),
  ],
  validate(obj, old) {
    const errs: FieldError[] = [];
    const size =
      validateDataMap(obj.data, 'data', errs, 'string') +
      validateDataMap(obj.binaryData, 'binaryData', errs, 'base64');
    if (size > MAX_SECRET_BYTES) {
      errs.push({
        type: 'FieldValueTooLong',
        field: '',
        detail: `Too long: may not be more than ${MAX_SECRET_BYTES} bytes`,
      });
    }
    const data = (obj.data as object) ?? {};
    for (const key of Object.keys((obj.binaryData as object) ?? {})) {
      if (key in data)
        errs.push({
          type: 'FieldValueInvalid',
          field: 'binaryData',
          value: key,
          detail: 'duplicate of key present in data',
        });
    }
    errs.push(...immutableData(obj, old, ['data', 'binaryData']));
    return errs;
  },
});

export const namespaces = builtin({
  resource: 'namespaces',
  model: 'V1Namespace',
  singular: 'namespace',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  selectableFields: ['status.phase'],
  columns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The status of the namespace' },
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name, (obj.status as { phase?: string })?.phase ?? '', age(obj, now)],
  fieldValues: (obj) => ({ 'status.phase': (obj.status as { phase?: string })?.phase ?? '' }),
  onCreate(obj) {
    // The "kubernetes" finalizer keeps a deleted namespace until its contents are gone (namespace/lifecycle.ts).
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  },
});

export const events = builtin({
  resource: 'events',
  model: 'CoreV1Event',
  singular: 'event',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  selectableFields: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  columns: [
    { name: 'Last Seen', type: 'string', description: 'Time since the event was last seen.' },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning).' },
    { name: 'Reason', type: 'string', description: 'Short, machine understandable reason of the event.' },
    { name: 'Object', type: 'string', description: 'The object this event is about.' },
    {
      name: 'Message',
      type: 'string',
      description: 'A human-readable description of the status of this operation.',
    },
    { ...nameColumn, priority: 1 },
  ],
  cells(obj, now) {
    const involved = (obj.involvedObject as Record<string, string>) ?? {};
    const last = (obj.lastTimestamp as string) || (obj.eventTime as string) || obj.metadata.creationTimestamp;
    return [
      humanAge(last, now),
      obj.type ?? '',
      obj.reason ?? '',
      `${String(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`,
      obj.message ?? '',
      obj.metadata.name,
    ];
  },
  fieldValues(obj) {
    const involved = (obj.involvedObject as Record<string, string>) ?? {};
    const source = (obj.source as { component?: string }) ?? {};
    return {
      'involvedObject.kind': involved.kind ?? '',
      'involvedObject.namespace': involved.namespace ?? '',
      'involvedObject.name': involved.name ?? '',
      'involvedObject.uid': involved.uid ?? '',
      'involvedObject.apiVersion': involved.apiVersion ?? '',
      'involvedObject.resourceVersion': involved.resourceVersion ?? '',
      'involvedObject.fieldPath': involved.fieldPath ?? '',
      reason: String(obj.reason ?? ''),
      reportingComponent: String(obj.reportingComponent ?? ''),
      source: source.component ?? '',
      type: String(obj.type ?? ''),
    };
  },
  validate(obj) {
    const errs: FieldError[] = [];
    const involved = obj.involvedObject as Record<string, string> | undefined;
    if (!involved) errs.push({ type: 'FieldValueRequired', field: 'involvedObject' });
    else if (involved.namespace && involved.namespace !== obj.metadata.namespace) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'involvedObject.namespace',
        value: involved.namespace,
        detail: 'does not match event.namespace',
      });
    }
    if (obj.type && obj.type !== 'Normal' && obj.type !== 'Warning') {
      errs.push({
        type: 'FieldValueNotSupported',
        field: 'type',
        value: obj.type,
        detail: 'supported values: "Normal", "Warning"',
      });
    }
    return errs;
  },
});

export const serviceaccounts = builtin({
  resource: 'serviceaccounts',
  model: 'V1ServiceAccount',
  singular: 'serviceaccount',
  kind: 'ServiceAccount',
  namespaced: true,
  shortNames: ['sa'],
  columns: [nameColumn, { name: 'Secrets', type: 'string', description: 'Number of secrets.' }, ageColumn],
  cells: (obj, now) => [obj.metadata.name, ((obj.secrets as unknown[]) ?? []).length, age(obj, now)],
});

export const leases = builtin({
  group: 'coordination.k8s.io',
  resource: 'leases',
  model: 'V1Lease',
  singular: 'lease',
  kind: 'Lease',
  namespaced: true,
  columns: [
    nameColumn,
    { name: 'Holder', type: 'string', description: 'The holder of the lease.' },
    ageColumn,
  ],
  cells: (obj, now) => [
    obj.metadata.name,
    (obj.spec as { holderIdentity?: string })?.holderIdentity ?? '',
    age(obj, now),
  ],
  validate(obj) {
    const errs: FieldError[] = [];
    const spec = (obj.spec as Record<string, unknown>) ?? {};
    for (const field of ['leaseDurationSeconds', 'leaseTransitions']) {
      const v = spec[field];
      if (v !== undefined && v !== null && (!Number.isInteger(v) || (v as number) < 0)) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `spec.${field}`,
          value: v,
          detail: 'must be greater than or equal to 0',
        });
      }
    }
    return errs;
  },
});

export const customresourcedefinitions = builtin({
  group: 'apiextensions.k8s.io',
  resource: 'customresourcedefinitions',
  model: 'V1CustomResourceDefinition',
  singular: 'customresourcedefinition',
  kind: 'CustomResourceDefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  statusSubresource: true,
  tracksGeneration: true,
  columns: [nameColumn, { name: 'Created At', type: 'date', description: 'When the CRD was created.' }],
  cells: (obj) => [obj.metadata.name, obj.metadata.creationTimestamp],
  validate: (obj, old) => validateCustomResourceDefinition(obj, old),
  onCreate: prepareNewCrd,
  // kubectl sends merge patches for CRDs (not in its scheme); no strategic merge.
  strategicMerge: undefined,
});

export const builtinResources: ResourceDefinition[] = [
  namespaces,
  secrets,
  configmaps,
  events,
  serviceaccounts,
  leases,
  customresourcedefinitions,
];

export { ALL_VERBS };
