/** The options, results and callbacks of ObjectStore's operations, and what a store needs from the server. */

import { type FieldError, type StatusError, type StoredObject } from '@certkit/apimachinery';
import { type KeyValue, type Storage } from '../../storage/types.ts';
import { type ResourceDefinition } from '../resource.ts';
import type { AdmissionWebhooks } from '../../admission/chain.ts';
import type { RequestAdmission } from '../../admission/attributes.ts';
import { type ServiceRanges } from '../builtins/service-ranges.ts';
import type { UserInfo } from '../../security/user.ts';

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  dryRun?: boolean;
  /** The request, for admission webhooks; set by the API's handlers only while some are configured. */
  admission?: RequestAdmission;
}

export interface WriteOptions {
  /** Who sent the write (ResourceStrategy.setRequester reads it on create). */
  user?: UserInfo;
  dryRun?: boolean;
  /** `status` for the status subresource. */
  subresource?: string;
  /**
   * The input is the store's to keep and change: a request body parsed for this call alone. It is then used
   * as it is instead of being copied first (copying whole objects is a large part of a write's cost).
   */
  inputOwned?: boolean;
  /** The field manager of the write, asked only for objects that carry managedFields. */
  fieldManager?: () => string;
  /** The input's managedFields were computed by server-side apply: stored as they are. */
  applied?: boolean;
  /** The request, for admission webhooks; set by the API's handlers only while some are configured. */
  admission?: RequestAdmission;
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A list read from storage a page at a time (ObjectStore.listPaged). */
export interface PagedList {
  resourceVersion: string;
  /** The matching objects as stored (UTF-8 bytes), a page at a time; storage is read as they are iterated. */
  pages: AsyncIterable<KeyValue<Uint8Array>[]> | Iterable<KeyValue<Uint8Array>[]>;
}

/** Receives a watch's events; objects carry their resourceVersion. */
export interface WatchSink {
  added(obj: StoredObject): void;
  modified(obj: StoredObject): void;
  deleted(obj: StoredObject): void;
  /** The initial events of sendInitialEvents are done (the caller sends the bookmark if asked to). */
  initialEventsEnd(resourceVersion: string): void;
  /** The watch cannot go on; the Status is sent as an ERROR event and the stream ends. */
  error(status: StatusError): void;
  /** An event already serialised (shared by every watcher that wants these bytes); see watchcache/frames.ts. */
  frame(bytes: Buffer, resourceVersion: string): void;
  /** The source is gone (watch cache re-initialising): end the stream cleanly so the client re-watches. */
  end(): void;
  /** While the connection holds much unsent, a promise of its draining (initial events wait for it). */
  backlog?(): Promise<void> | undefined;
}

/** What a store needs from the rest of the server. */
export interface StoreContext {
  storage: Storage;
  /** The ranges Services take cluster IPs and node ports from (the server's --service-* flags). */
  serviceRanges?: ServiceRanges;
  /**
   * Finds a namespace, so objects are not created in one that is missing or terminating: at once when it
   * is at hand (every namespaced create asks), else through a promise. Set by Registry.wire: the
   * namespaces' watch cache answers, which is built on the registry.
   */
  getNamespace?(name: string): StoredObject | undefined | Promise<StoredObject | undefined>;
  /**
   * Called after an object is created or updated (CRDs use it to start serving). Set by Registry.wire: the
   * CRD controller, which sits on the registry, is told.
   */
  afterWrite?(def: ResourceDefinition, obj: StoredObject): void;
  /**
   * Validating admission beyond the schema (what a validating webhook does in a real cluster): field errors
   * refuse the write with 422. Runs on create and on every update, with the stored object as `old`; a
   * status subresource update says so in `subresource` (AdmissionRequest.subResource): a webhook registered
   * for every subresource, as cert-manager's is, sees those too and judges them by what a status may change.
   */
  /**
   * The admission webhooks (admission/chain.ts), called for writes whose options carry `admission`. Set by
   * Registry.wireWebhooks: they read their configurations from watch caches built on the registry.
   */
  webhooks?: AdmissionWebhooks;
  admit?(
    def: ResourceDefinition,
    obj: StoredObject,
    old: StoredObject | undefined,
    subresource?: string,
  ): FieldError[];
}
