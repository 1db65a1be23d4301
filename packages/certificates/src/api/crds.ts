/**
 * The four cert-manager.io/v1 CustomResourceDefinitions: names, scopes, printer columns and selectable
 * fields exactly as cert-manager's `deploy/crds/*.yaml`, with schemas from ./schemas. The same objects
 * are served by the embedded API server and rendered to deploy/crds.yaml for real clusters.
 */

import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
} from 'kubernetes-types/apiextensions/v1.d.ts';
import { GROUP, Kinds, VERSION } from './constants.ts';
import { certificateSchema } from './schemas/certificate.ts';
import { certificateRequestSchema } from './schemas/certificaterequest.ts';
import { clusterIssuerSchema, issuerSchema } from './schemas/issuer.ts';
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
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
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
      name: `${d.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'certkit', 'app.kubernetes.io/component': 'crds' },
    },
    spec: {
      group: GROUP,
      names: {
        kind: d.kind,
        listKind: `${d.kind}List`,
        plural: d.plural,
        singular: d.singular,
        shortNames: d.shortNames,
        categories: ['cert-manager'],
      },
      scope: d.scope,
      versions: [
        {
          name: VERSION,
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

const DEFINITIONS: Definition[] = [
  {
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
];

/** Fresh copies of the four CRDs, Certificate first; callers may change them freely. */
export function certManagerCrds(): CustomResourceDefinition[] {
  return DEFINITIONS.map((d) => structuredClone(customResourceDefinition(d)));
}
