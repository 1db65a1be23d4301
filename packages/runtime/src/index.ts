/**
 * A controller runtime for Node.js with the semantics of client-go and controller-runtime: a client for any
 * Kubernetes API server (`KubeClient`, `loadClientConfig`), informers and controller-runtime's cache
 * (`newCache`), rate-limited work queues, and controllers run by a `Manager` with leader election, health
 * probes and metrics. `examples/configmap-copier` in the repository is a complete controller built on it.
 *
 * @packageDocumentation
 * @module @certkit/runtime
 */
export * as builtins from './client/builtins.ts';
export {
  type ClientConfig,
  type CredentialProvider,
  type Credentials,
  staticCredentials,
} from './client/config.ts';
export { isNoKindMatch, NoKindMatchError, RestMapper } from './client/discovery.ts';
export { genericServerResponse } from './client/errors.ts';
export { type ExecConfig, execCredentials } from './client/exec-credentials.ts';
export { type InClusterOptions, inClusterConfig } from './client/in-cluster.ts';
export { KubeClient, type KubeClientOptions } from './client/kube-client.ts';
export { type LoadKubeconfigOptions, loadKubeconfig } from './client/kubeconfig.ts';
export { type LoadClientConfigOptions, loadClientConfig } from './client/load-config.ts';
export { ListScanner } from './client/list-scanner.ts';
export { DEFAULT_BURST, DEFAULT_QPS, RateLimiter, type RateLimiterOptions } from './client/ratelimit.ts';
export {
  DEFAULT_WATCH_INACTIVITY_MS,
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  PATCH_CONTENT_TYPES,
  resourcePath,
} from './client/resource-client.ts';
export { tokenFileCredentials } from './client/token-file.ts';
export { currentUserAgent, withUserAgent } from './client/user-agent.ts';
export {
  TOKEN_REFRESH_FRACTION,
  type TokenRequestOptions,
  tokenRequestCredentials,
} from './client/token-request.ts';
export { type RequestHook, type RequestInfo, USER_AGENT } from './client/transport.ts';
export type * from './client/types.ts';
export { WatchInactivityError } from './client/watch-stream.ts';
export * from './cache/index.ts';
export * from './events/index.ts';
export * from './informers/index.ts';
export * from './log.ts';
export * from './manager/index.ts';
export * from './workqueue/index.ts';
