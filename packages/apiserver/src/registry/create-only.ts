/**
 * Create-only resources: kinds whose create computes an answer and stores nothing (SubjectAccessReview,
 * SelfSubjectReview, TokenReview in kube). The kind is a ResourceDefinition with `createOnly` set, served
 * and discovered like any other with the one verb `create`; what a create answers is a handler the server
 * registers once the parts it needs (the authorizer) exist.
 */

import type { KubeObject } from '@certkit/apimachinery';
import type { UserInfo } from '../security/user.ts';

export interface CreateOnlyRequest {
  /** Who sent it; undefined on a server without authentication. */
  user: UserInfo | undefined;
  /** The namespace of the request's path, for namespaced kinds. */
  namespace: string | undefined;
  /** The apiVersion the answer is rendered in. */
  apiVersion: string;
}

/** Computes the answer of a create from its decoded body; throws a StatusError for a bad one. */
export type CreateOnlyHandler = (body: KubeObject, request: CreateOnlyRequest) => KubeObject;

export const CREATE_ONLY_VERBS = ['create'];
