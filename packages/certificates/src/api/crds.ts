/**
 * The four cert-manager.io/v1 and the two acme.cert-manager.io/v1 CustomResourceDefinitions: names, scopes,
 * categories, printer columns and selectable fields exactly as cert-manager's `deploy/crds/*.yaml`, with
 * schemas from ./schemas. The same objects are served by the embedded API server and rendered to
 * deploy/crds.yaml for real clusters.
 */

import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
} from 'kubernetes-types/apiextensions/v1.d.ts';
import { ACME_GROUP, ACME_VERSION, AcmeKinds } from './acme-constants.ts';
import { GROUP, Kinds, VERSION } from './constants.ts';
import { certificateSchema } from './schemas/certificate.ts';
import { certificateRequestSchema } from './schemas/certificaterequest.ts';
import { clusterIssuerSchema, issuerSchema } from './schemas/issuer.ts';
import { challengeSchema, orderSchema } from './schemas/order.ts';
import type { Schema } from './schemas/builders.ts';

const ready = (field: 'status' | 'message') => `.status.conditions[?(@.type == "Ready")].${field}`;

const AGE: CustomResourceColumnDefinition = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.',
};

const ISSUER_REF_FIELDS = [
  { jsonPath: '.spec.issuerRef.group' },
  { jsonPath: '.spec.issuerRef.kind' },
  { jsonPath: '.spec.issuerRef.name' },
];

interface Definition {
  group: string;
  version: string;
  /** cert-manager for every kind; the ACME kinds are also in cert-manager-acme. */
  categories: string[];
  kind: string;
  plural: string;
  singular: string;
  /** cert-manager.io kinds only: the ACME kinds have none. */
  shortNames?: string[];
  scope: 'Namespaced' | 'Cluster';
  columns: CustomResourceColumnDefinition[];
  selectableFields?: { jsonPath: string }[];
  schema: Schema;
}

function customResourceDefinition(d: Definition): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${d.plural}.${d.group}`,
      labels: { 'app.kubernetes.io/name': 'certkit', 'app.kubernetes.io/component': 'crds' },
    },
    spec: {
      group: d.group,
      names: {
        kind: d.kind,
        listKind: `${d.kind}List`,
        plural: d.plural,
        singular: d.singular,
        ...(d.shortNames ? { shortNames: d.shortNames } : {}),
        categories: d.categories,
      },
      scope: d.scope,
      versions: [
        {
          name: d.version,
          served: true,
          storage: true,
          additionalPrinterColumns: d.columns,
          ...(d.selectableFields ? { selectableFields: d.selectableFields } : {}),
          schema: { openAPIV3Schema: d.schema },
          subresources: { status: {} },
        },
      ],
    },
  };
}

const CERT_MANAGER = { group: GROUP, version: VERSION, categories: ['cert-manager'] };
const ACME = { group: ACME_GROUP, version: ACME_VERSION, categories: ['cert-manager', 'cert-manager-acme'] };
const state: CustomResourceColumnDefinition = { name: 'State', type: 'string', jsonPath: '.status.state' };
const reason: CustomResourceColumnDefinition = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.reason',
  priority: 1,
};

const DEFINITIONS: Definition[] = [
  {
    ...CERT_MANAGER,
    kind: Kinds.Certificate,
    plural: 'certificates',
    singular: 'certificate',
    shortNames: ['cert', 'certs'],
    scope: 'Namespaced',
    columns: [
      { name: 'Ready', type: 'string', jsonPath: ready('status') },
      { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' },
      { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 },
      { name: 'Status', type: 'string', jsonPath: ready('message'), priority: 1 },
      { name: 'Expiration', type: 'string', jsonPath: '.status.notAfter', priority: 1 },
      AGE,
    ],
    selectableFields: ISSUER_REF_FIELDS,
    schema: certificateSchema,
  },
  {
    ...CERT_MANAGER,
    kind: Kinds.CertificateRequest,
    plural: 'certificaterequests',
    singular: 'certificaterequest',
    shortNames: ['cr', 'crs'],
    scope: 'Namespaced',
    columns: [
      { name: 'Approved', type: 'string', jsonPath: '.status.conditions[?(@.type == "Approved")].status' },
      { name: 'Denied', type: 'string', jsonPath: '.status.conditions[?(@.type == "Denied")].status' },
      { name: 'Ready', type: 'string', jsonPath: ready('status') },
      { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name' },
      { name: 'Requester', type: 'string', jsonPath: '.spec.username' },
      { name: 'Status', type: 'string', jsonPath: ready('message'), priority: 1 },
      AGE,
    ],
    selectableFields: ISSUER_REF_FIELDS,
    schema: certificateRequestSchema,
  },
  {
    ...CERT_MANAGER,
    kind: Kinds.Issuer,
    plural: 'issuers',
    singular: 'issuer',
    shortNames: ['iss'],
    scope: 'Namespaced',
    columns: [
      { name: 'Ready', type: 'string', jsonPath: ready('status') },
      { name: 'Status', type: 'string', jsonPath: ready('message'), priority: 1 },
      AGE,
    ],
    schema: issuerSchema,
  },
  {
    ...CERT_MANAGER,
    kind: Kinds.ClusterIssuer,
    plural: 'clusterissuers',
    singular: 'clusterissuer',
    shortNames: ['ciss'],
    scope: 'Cluster',
    columns: [
      { name: 'Ready', type: 'string', jsonPath: ready('status') },
      { name: 'Status', type: 'string', jsonPath: ready('message'), priority: 1 },
      AGE,
    ],
    schema: clusterIssuerSchema,
  },
  {
    ...ACME,
    kind: AcmeKinds.Order,
    plural: 'orders',
    singular: 'order',
    scope: 'Namespaced',
    columns: [
      state,
      { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 },
      reason,
      AGE,
    ],
    selectableFields: ISSUER_REF_FIELDS,
    schema: orderSchema,
  },
  {
    ...ACME,
    kind: AcmeKinds.Challenge,
    plural: 'challenges',
    singular: 'challenge',
    scope: 'Namespaced',
    columns: [state, { name: 'Domain', type: 'string', jsonPath: '.spec.dnsName' }, reason, AGE],
    selectableFields: ISSUER_REF_FIELDS,
    schema: challengeSchema,
  },
];

/** Fresh copies of the six CRDs, Certificate first and Challenge last; callers may change them freely. */
export function certManagerCrds(): CustomResourceDefinition[] {
  return DEFINITIONS.map((d) => structuredClone(customResourceDefinition(d)));
}
