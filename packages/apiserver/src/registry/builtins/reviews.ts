/**
 * The access and identity reviews: authorization.k8s.io/v1 SubjectAccessReview, LocalSubjectAccessReview,
 * SelfSubjectAccessReview, SelfSubjectRulesReview and authentication.k8s.io/v1 SelfSubjectReview. Create-only
 * (registry/create-only.ts): the server registers what each create answers (authorization/reviews.ts).
 */

import { CREATE_ONLY_VERBS } from '../create-only.ts';
import { nameColumn } from '../printing.ts';
import type { ResourceDefinition } from '../resource.ts';
import { builtin } from './builtin.ts';

function review(
  group: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  model: string,
): ResourceDefinition {
  return builtin({
    group,
    resource,
    singular: resource.replace(/s$/, ''),
    kind,
    namespaced,
    model,
    verbs: CREATE_ONLY_VERBS,
    createOnly: true,
    strategicMerge: undefined,
    columns: [nameColumn],
    cells: (obj) => [obj.metadata.name],
  });
}

const AUTHORIZATION = 'authorization.k8s.io';

export const subjectaccessreviews = review(
  AUTHORIZATION,
  'subjectaccessreviews',
  'SubjectAccessReview',
  false,
  'V1SubjectAccessReview',
);
export const localsubjectaccessreviews = review(
  AUTHORIZATION,
  'localsubjectaccessreviews',
  'LocalSubjectAccessReview',
  true,
  'V1LocalSubjectAccessReview',
);
export const selfsubjectaccessreviews = review(
  AUTHORIZATION,
  'selfsubjectaccessreviews',
  'SelfSubjectAccessReview',
  false,
  'V1SelfSubjectAccessReview',
);
export const selfsubjectrulesreviews = review(
  AUTHORIZATION,
  'selfsubjectrulesreviews',
  'SelfSubjectRulesReview',
  false,
  'V1SelfSubjectRulesReview',
);
export const selfsubjectreviews = review(
  'authentication.k8s.io',
  'selfsubjectreviews',
  'SelfSubjectReview',
  false,
  'V1SelfSubjectReview',
);
