/**
 * What the admission chain knows of one write (kube-apiserver's admission.Attributes): the request as the
 * handler saw it (RequestAdmission, built once per request) and the operation on one object.
 */

import type { StoredObject } from '@certkit/apimachinery';
import type { UserInfo } from '../security/user.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What only the HTTP request knows: who sent it, at which version, and where warnings go. */
export interface RequestAdmission {
  user: UserInfo | undefined;
  /** The version the request addressed (requestKind/requestResource). */
  version: string;
  subresource: string | undefined;
  dryRun: boolean;
  /**
   * The request's options (dryRun, fieldManager, a delete's propagationPolicy…), sent as the operation's
   * CreateOptions, UpdateOptions or DeleteOptions (a patch is an update, or a create when it applies a new
   * object, as in kube-apiserver).
   */
  options: Record<string, unknown>;
  /** Adds `Warning` headers to the response. */
  warn(messages: string[]): void;
}

/** One object's admission: the request, the operation and the objects (absent where kube sends none). */
export interface AdmissionAttributes {
  request: RequestAdmission;
  operation: Operation;
  /** The object being written, at the storage version; changed in place by mutating webhooks. */
  object: StoredObject | undefined;
  oldObject: StoredObject | undefined;
  /** For a generated name on create: "" (kube's webhooks see none either). */
  name: string;
  /** "" for cluster-scoped objects; for a Namespace, its own name (as kube-apiserver sets it). */
  namespace: string;
}
