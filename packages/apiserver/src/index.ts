export { ApiServer, type ApiServerOptions, VERSION_INFO } from './http/server.ts';
export { ensureServingCertificates, type ServingCertificates } from './security/certificates.ts';
export { kubeconfigYaml, writeKubeconfig } from './security/kubeconfig.ts';
export { ensureToken } from './security/token.ts';
export { startCompactor } from './storage/compactor.ts';
export { EtcdStorage } from './storage/etcd.ts';
export { SqliteStorage, type SqliteSynchronous } from './storage/sqlite.ts';
export type { Storage } from './storage/types.ts';
