/**
 * Authorization modes, as kube-apiserver's --authorization-mode: `RBAC` (the default when requests are
 * authenticated), behind the privileged-group authorizer that lets `system:masters` do anything, or
 * `AlwaysAllow`.
 */

import type { Attributes } from './attributes.ts';
import { ruleAllows } from './policy-rule.ts';
import type { RbacIndex } from './rbac-index.ts';

export type AuthorizationMode = 'RBAC' | 'AlwaysAllow';

export const AUTHORIZATION_MODES: readonly AuthorizationMode[] = ['RBAC', 'AlwaysAllow'];

/** kube-apiserver's superuser group: allowed everything before any other authorizer is asked. */
export const MASTERS_GROUP = 'system:masters';

export interface Decision {
  allowed: boolean;
  /** Why, as SubjectAccessReview's status.reason reports it. */
  reason: string;
}

export interface Authorizer {
  readonly mode: AuthorizationMode;
  authorize(attrs: Attributes): Decision;
}

const ALWAYS = { allowed: true, reason: '' };

export class AlwaysAllowAuthorizer implements Authorizer {
  readonly mode = 'AlwaysAllow';
  authorize(): Decision {
    return ALWAYS;
  }
}

const MASTERS: Decision = { allowed: true, reason: '' };
const NO_OPINION: Decision = { allowed: false, reason: '' };

export class RbacAuthorizer implements Authorizer {
  readonly mode = 'RBAC';
  readonly index: RbacIndex;
  constructor(index: RbacIndex) {
    this.index = index;
  }

  authorize(attrs: Attributes): Decision {
    if (attrs.user.groups.includes(MASTERS_GROUP)) return MASTERS;
    // The namespace's RoleBindings count only for requests inside it; cluster-wide ones always.
    const allowed = this.index.visitRules(
      attrs.user,
      attrs.resourceRequest ? attrs.namespace : '',
      (rules) => {
        for (const rule of rules) if (ruleAllows(attrs, rule)) return true;
        return false;
      },
    );
    return allowed ? { allowed: true, reason: 'RBAC: allowed' } : NO_OPINION;
  }
}
