/**
 * rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding, validated as kube's
 * pkg/apis/rbac/validation does (field paths included); a binding's roleRef cannot change.
 */

import type { FieldError, StoredObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { appendErrors, dns1123SubdomainErrors } from '@certkit/apimachinery';
import { age, builtin } from './builtin.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** RBAC names only need to be usable as a path segment (kube's ValidateRBACName): `system:basic-user` is one. */
export function pathSegmentName(name: string, prefix = false): string[] {
  // A prefix may be '.' or '..': the generated name is longer.
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

interface Rule {
  verbs?: unknown[];
  apiGroups?: unknown[];
  resources?: unknown[];
  resourceNames?: unknown[];
  nonResourceURLs?: unknown[];
}

const nonEmpty = (list: unknown[] | undefined) => Array.isArray(list) && list.length > 0;

/** kube's ValidatePolicyRule for each of the object's rules. */
function validateRules(obj: StoredObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const rules = (obj.rules as Rule[] | undefined) ?? [];
  rules.forEach((rule, i) => {
    const path = `rules[${i}]`;
    if (!nonEmpty(rule.verbs)) {
      errs.push({
        type: 'FieldValueRequired',
        field: `${path}.verbs`,
        detail: 'verbs must contain at least one value',
      });
    }
    if (nonEmpty(rule.nonResourceURLs)) {
      if (namespaced) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${path}.nonResourceURLs`,
          value: rule.nonResourceURLs,
          detail: 'namespaced rules cannot apply to non-resource URLs',
        });
      }
      if (nonEmpty(rule.apiGroups) || nonEmpty(rule.resources) || nonEmpty(rule.resourceNames)) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${path}.nonResourceURLs`,
          value: rule.nonResourceURLs,
          detail: 'rules cannot apply to both regular resources and non-resource URLs',
        });
      }
      return;
    }
    if (!nonEmpty(rule.apiGroups)) {
      errs.push({
        type: 'FieldValueRequired',
        field: `${path}.apiGroups`,
        detail: 'resource rules must supply at least one api group',
      });
    }
    if (!nonEmpty(rule.resources)) {
      errs.push({
        type: 'FieldValueRequired',
        field: `${path}.resources`,
        detail: 'resource rules must supply at least one resource',
      });
    }
  });
  return errs;
}

function validateAggregationRule(obj: StoredObject): FieldError[] {
  const rule = obj.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined | null;
  if (!rule) return [];
  if (!nonEmpty(rule.clusterRoleSelectors)) {
    return [{ type: 'FieldValueRequired', field: 'aggregationRule.clusterRoleSelectors' }];
  }
  const errs: FieldError[] = [];
  rule.clusterRoleSelectors!.forEach((selector, i) => {
    const s = selector as { matchLabels?: object; matchExpressions?: unknown[] } | null;
    if (!s || (!s.matchLabels && !s.matchExpressions)) {
      errs.push({
        type: 'FieldValueRequired',
        field: `aggregationRule.clusterRoleSelectors[${i}]`,
        detail: 'a selector must have matchLabels or matchExpressions',
      });
    }
  });
  return errs;
}

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

/** kube's ValidateRoleBinding/ValidateClusterRoleBinding: roleRef, then each subject. */
function validateBinding(
  obj: StoredObject,
  old: StoredObject | undefined,
  namespaced: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const ref = (obj.roleRef as RoleRef | undefined) ?? {};
  if (ref.apiGroup !== RBAC_GROUP) {
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'roleRef.apiGroup',
      value: ref.apiGroup ?? '',
      detail: `supported values: "${RBAC_GROUP}"`,
    });
  }
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) {
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'roleRef.kind',
      value: ref.kind ?? '',
      detail: `supported values: ${kinds.map((k) => `"${k}"`).join(', ')}`,
    });
  }
  if (!ref.name) {
    errs.push({ type: 'FieldValueRequired', field: 'roleRef.name' });
  } else {
    for (const msg of pathSegmentName(ref.name)) {
      errs.push({ type: 'FieldValueInvalid', field: 'roleRef.name', value: ref.name, detail: msg });
    }
  }
  const subjects = (obj.subjects as Subject[] | undefined) ?? [];
  subjects.forEach((subject, i) =>
    appendErrors(errs, validateSubject(subject ?? {}, `subjects[${i}]`, namespaced)),
  );
  if (old) {
    const before = (old.roleRef as RoleRef | undefined) ?? {};
    if (before.apiGroup !== ref.apiGroup || before.kind !== ref.kind || before.name !== ref.name) {
      errs.push({ type: 'FieldValueInvalid', field: 'roleRef', value: ref, detail: 'cannot change roleRef' });
    }
  }
  return errs;
}

function validateSubject(subject: Subject, path: string, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!subject.name) errs.push({ type: 'FieldValueRequired', field: `${path}.name` });
  switch (subject.kind) {
    case 'ServiceAccount':
      if (subject.apiGroup) {
        errs.push({
          type: 'FieldValueNotSupported',
          field: `${path}.apiGroup`,
          value: subject.apiGroup,
          detail: 'supported values: ""',
        });
      }
      if (subject.name) {
        for (const msg of dns1123SubdomainErrors(subject.name)) {
          errs.push({ type: 'FieldValueInvalid', field: `${path}.name`, value: subject.name, detail: msg });
        }
      }
      // In a RoleBinding an empty namespace means the binding's own; a ClusterRoleBinding has none.
      if (!namespaced && !subject.namespace) {
        errs.push({ type: 'FieldValueRequired', field: `${path}.namespace` });
      }
      break;
    case 'User':
    case 'Group':
      if (subject.apiGroup !== RBAC_GROUP) {
        errs.push({
          type: 'FieldValueNotSupported',
          field: `${path}.apiGroup`,
          value: subject.apiGroup ?? '',
          detail: `supported values: "${RBAC_GROUP}"`,
        });
      }
      break;
    default:
      errs.push({
        type: 'FieldValueNotSupported',
        field: `${path}.kind`,
        value: subject.kind ?? '',
        detail: 'supported values: "ServiceAccount", "User", "Group"',
      });
  }
  return errs;
}

/**
 * rbac/v1's defaulting: a User or Group subject is in the RBAC group, a ServiceAccount in the core group. The
 * core group is "", which Subject's `apiGroup,omitempty` never writes out: stored as absent, so that
 * `kubectl apply` of an unchanged binding finds nothing to patch (an explicit "" made it "configured").
 */
function defaultSubjects(obj: StoredObject): void {
  for (const subject of (obj.subjects as Subject[] | undefined) ?? []) {
    if (!subject || typeof subject !== 'object') continue;
    if (subject.kind === 'ServiceAccount') {
      if (subject.apiGroup === '') delete subject.apiGroup;
      continue;
    }
    if (subject.apiGroup !== undefined) continue;
    if (subject.kind === 'User' || subject.kind === 'Group') subject.apiGroup = RBAC_GROUP;
  }
}

const createdAtColumn = {
  name: 'Created At',
  type: 'string',
  format: 'date-time',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};

const roleColumn = { name: 'Role', type: 'string', description: 'The role the binding grants.', priority: 0 };

const roleOf = (obj: StoredObject) => {
  const ref = (obj.roleRef as RoleRef | undefined) ?? {};
  return `${ref.kind ?? ''}/${ref.name ?? ''}`;
};

const rbacKind = { group: RBAC_GROUP, validName: pathSegmentName };

export const roles = builtin({
  ...rbacKind,
  resource: 'roles',
  model: 'V1Role',
  singular: 'role',
  kind: 'Role',
  namespaced: true,
  columns: [nameColumn, createdAtColumn],
  cells: (obj) => [obj.metadata.name, obj.metadata.creationTimestamp],
  validate: (obj) => validateRules(obj, true),
});

export const clusterroles = builtin({
  ...rbacKind,
  resource: 'clusterroles',
  model: 'V1ClusterRole',
  singular: 'clusterrole',
  kind: 'ClusterRole',
  namespaced: false,
  columns: [nameColumn, createdAtColumn],
  cells: (obj) => [obj.metadata.name, obj.metadata.creationTimestamp],
  validate: (obj) => [...validateRules(obj, false), ...validateAggregationRule(obj)],
});

export const rolebindings = builtin({
  ...rbacKind,
  resource: 'rolebindings',
  model: 'V1RoleBinding',
  singular: 'rolebinding',
  kind: 'RoleBinding',
  namespaced: true,
  columns: [nameColumn, roleColumn, ageColumn],
  cells: (obj, now) => [obj.metadata.name, roleOf(obj), age(obj, now)],
  normalize: (obj) => defaultSubjects(obj as StoredObject),
  validate: (obj, old) => validateBinding(obj, old, true),
});

export const clusterrolebindings = builtin({
  ...rbacKind,
  resource: 'clusterrolebindings',
  model: 'V1ClusterRoleBinding',
  singular: 'clusterrolebinding',
  kind: 'ClusterRoleBinding',
  namespaced: false,
  columns: [nameColumn, roleColumn, ageColumn],
  cells: (obj, now) => [obj.metadata.name, roleOf(obj), age(obj, now)],
  normalize: (obj) => defaultSubjects(obj as StoredObject),
  validate: (obj, old) => validateBinding(obj, old, false),
});
