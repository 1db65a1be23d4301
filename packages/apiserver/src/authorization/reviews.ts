/**
 * What creates of the access and identity reviews answer (registry/builtins/reviews.ts declares the kinds):
 * SubjectAccessReview for anyone named in its spec, LocalSubjectAccessReview inside the path's namespace,
 * SelfSubjectAccessReview and SelfSubjectRulesReview for the caller (`kubectl auth can-i [--list]`), and
 * SelfSubjectReview, the caller's user info (`kubectl auth whoami`). Nothing is stored.
 */

import {
  appendErrors,
  type FieldError,
  type KubeObject,
  newBadRequest,
  newInvalid,
  newUnauthorized,
} from '@certkit/apimachinery';
import type { CreateOnlyHandler, CreateOnlyRequest } from '../registry/create-only.ts';
import type { Registry } from '../registry/registry.ts';
import type { UserInfo } from '../security/user.ts';
import { type Attributes, nonResourceAttributes } from './attributes.ts';
import type { Authorizer } from './authorizer.ts';
import type { PolicyRule } from './policy-rule.ts';
import type { RbacIndex } from './rbac-index.ts';

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

interface AccessReviewSpec {
  resourceAttributes?: ResourceAttributes | null;
  nonResourceAttributes?: NonResourceAttributes | null;
  user?: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

/** Registers the five reviews' answers on the registry. */
export function serveReviews(registry: Registry, authorizer: Authorizer, index: RbacIndex | undefined): void {
  const AUTHZ = 'authorization.k8s.io';
  registry.answerCreates(AUTHZ, 'subjectaccessreviews', subjectAccessReview(authorizer));
  registry.answerCreates(AUTHZ, 'localsubjectaccessreviews', localSubjectAccessReview(authorizer));
  registry.answerCreates(AUTHZ, 'selfsubjectaccessreviews', selfSubjectAccessReview(authorizer));
  registry.answerCreates(AUTHZ, 'selfsubjectrulesreviews', selfSubjectRulesReview(authorizer, index));
  registry.answerCreates('authentication.k8s.io', 'selfsubjectreviews', selfSubjectReview);
}

function specOf(body: KubeObject): AccessReviewSpec {
  const spec = body.spec;
  return spec && typeof spec === 'object' && !Array.isArray(spec) ? (spec as AccessReviewSpec) : {};
}

/** kube's ValidateSubjectAccessReviewSpec's first check: exactly one kind of attributes. */
function attributeErrors(spec: AccessReviewSpec): FieldError[] {
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    return [
      {
        type: 'FieldValueInvalid',
        field: 'spec.nonResourceAttributes',
        value: spec.nonResourceAttributes,
        detail: 'cannot be specified in combination with resourceAttributes',
      },
    ];
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    return [
      {
        type: 'FieldValueInvalid',
        field: 'spec.resourceAttributes',
        value: null,
        detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ];
  }
  return [];
}

/** ValidateSubjectAccessReviewSpec's second check, for the reviews that name whom they ask about: a user or a group. */
function subjectErrors(spec: AccessReviewSpec): FieldError[] {
  if (spec.user || (spec.groups?.length ?? 0) > 0) return [];
  return [
    {
      type: 'FieldValueInvalid',
      field: 'spec.user',
      value: spec.user ?? '',
      detail: 'at least one of user or group must be specified',
    },
  ];
}

/** The user a SubjectAccessReview or LocalSubjectAccessReview asks about, from its spec. */
function reviewedUser(spec: AccessReviewSpec): UserInfo {
  return { name: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: spec.extra };
}

function reviewAttributes(user: UserInfo, spec: AccessReviewSpec): Attributes {
  if (spec.nonResourceAttributes) {
    const a = spec.nonResourceAttributes;
    return nonResourceAttributes(user, a.verb ?? '', a.path ?? '');
  }
  const a = spec.resourceAttributes ?? {};
  return {
    user,
    verb: a.verb ?? '',
    resourceRequest: true,
    path: '',
    apiGroup: a.group ?? '',
    apiVersion: a.version ?? '',
    resource: a.resource ?? '',
    subresource: a.subresource ?? '',
    namespace: a.namespace ?? '',
    name: a.name ?? '',
  };
}

/** The review as sent, with its status: allowed, and the reason when there is one. */
function answer(
  body: KubeObject,
  request: CreateOnlyRequest,
  authorizer: Authorizer,
  user: UserInfo,
): KubeObject {
  const decision = authorizer.authorize(reviewAttributes(user, specOf(body)));
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  return {
    ...body,
    apiVersion: request.apiVersion,
    metadata: { ...((body.metadata as object) ?? {}) },
    status,
  } as unknown as KubeObject;
}

function caller(request: CreateOnlyRequest): UserInfo {
  // Without authentication (tests) there is no caller to review.
  if (!request.user) throw newUnauthorized();
  return request.user;
}

function subjectAccessReview(authorizer: Authorizer): CreateOnlyHandler {
  return (body, request) => {
    const spec = specOf(body);
    const errs = attributeErrors(spec);
    appendErrors(errs, subjectErrors(spec));
    if (errs.length > 0) throw newInvalid('authorization.k8s.io', 'SubjectAccessReview', '', errs);
    return answer(body, request, authorizer, reviewedUser(spec));
  };
}

function localSubjectAccessReview(authorizer: Authorizer): CreateOnlyHandler {
  return (body, request) => {
    const spec = specOf(body);
    const namespace = request.namespace!;
    const meta = (body.metadata ?? {}) as { namespace?: string };
    if (meta.namespace && meta.namespace !== namespace) {
      throw newBadRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const errs = attributeErrors(spec);
    if (spec.nonResourceAttributes) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.nonResourceAttributes',
        value: spec.nonResourceAttributes,
        detail: 'disallowed on this kind of request',
      });
    }
    appendErrors(errs, subjectErrors(spec));
    if (errs.length > 0) throw newInvalid('authorization.k8s.io', 'LocalSubjectAccessReview', '', errs);
    const attrs = spec.resourceAttributes!;
    if (attrs.namespace !== undefined && attrs.namespace !== '' && attrs.namespace !== namespace) {
      throw newBadRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
    }
    const reviewed = { ...body, spec: { ...spec, resourceAttributes: { ...attrs, namespace } } };
    const result = answer(reviewed, request, authorizer, reviewedUser(spec));
    (result.metadata as Record<string, unknown>).namespace = namespace;
    return result;
  };
}

function selfSubjectAccessReview(authorizer: Authorizer): CreateOnlyHandler {
  return (body, request) => {
    const errs = attributeErrors(specOf(body));
    if (errs.length > 0) throw newInvalid('authorization.k8s.io', 'SelfSubjectAccessReview', '', errs);
    return answer(body, request, authorizer, caller(request));
  };
}

interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

/**
 * The caller's rules in spec.namespace, as kube's rules resolver lists them: every rule of every binding
 * that applies, resource and non-resource rules apart. Under AlwaysAllow, one rule allowing everything.
 */
function selfSubjectRulesReview(authorizer: Authorizer, index: RbacIndex | undefined): CreateOnlyHandler {
  return (body, request) => {
    const user = caller(request);
    const namespace = String((specOf(body) as { namespace?: unknown }).namespace ?? '');
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    const add = (rule: PolicyRule) => {
      if (rule.nonResourceURLs?.length)
        nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs });
      else {
        const r: ResourceRule = {
          verbs: rule.verbs,
          apiGroups: rule.apiGroups ?? [],
          resources: rule.resources ?? [],
        };
        if (rule.resourceNames?.length) r.resourceNames = rule.resourceNames;
        resourceRules.push(r);
      }
    };
    if (!index || authorizer.mode === 'AlwaysAllow') {
      add({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
      add({ verbs: ['*'], nonResourceURLs: ['*'] });
    } else {
      for (const granted of index.grantedRules(user, namespace)) for (const rule of granted.rules) add(rule);
    }
    return {
      ...body,
      apiVersion: request.apiVersion,
      metadata: {},
      status: { resourceRules, nonResourceRules, incomplete: false },
    } as unknown as KubeObject;
  };
}

const selfSubjectReview: CreateOnlyHandler = (body, request) => {
  const user = caller(request);
  const userInfo: Record<string, unknown> = { username: user.name, groups: user.groups };
  if (user.uid) userInfo.uid = user.uid;
  if (user.extra && Object.keys(user.extra).length > 0) userInfo.extra = user.extra;
  return {
    kind: 'SelfSubjectReview',
    apiVersion: request.apiVersion,
    metadata: {},
    status: { userInfo },
  } as unknown as KubeObject;
};
