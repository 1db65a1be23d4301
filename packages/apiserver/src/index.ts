export { ApiServer, type ApiServerOptions, VERSION_INFO } from './http/server.ts';
export { ensureServingCertificates, type ServingCertificates } from './security/certificates.ts';
export { kubeconfigYaml, writeKubeconfig } from './security/kubeconfig.ts';
export { ensureToken } from './security/token.ts';
export {
  ensureSigningKey,
  GENERATED_SIGNING_KEY_FILE,
  loadSigningKey,
  loadVerificationKeys,
} from './security/serviceaccount/keys.ts';
export type { ServiceAccountTokenOptions } from './security/serviceaccount/config.ts';
export { loadTokenFile } from './security/token-file.ts';
export { loadClientCa, loadServingFiles } from './security/tls-files.ts';
export { requestUser, type UserInfo } from './security/user.ts';
export { parsePortRange, parseServiceCidr } from './registry/builtins/service-ranges.ts';
export { startCompactor } from './storage/compactor.ts';
export { EtcdStorage } from './storage/etcd/store.ts';
export { SqliteStorage, type SqliteSynchronous } from './storage/sqlite.ts';
export type { Storage } from './storage/types.ts';
