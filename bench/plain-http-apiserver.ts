import { resolve } from 'node:path';
import {
  ApiServer,
  ensureServingCertificates,
  ensureToken,
  SqliteStorage,
  startCompactor,
  writeKubeconfig,
} from '@certkit/apiserver';
import { certManagerAdmission, certManagerMutation } from '@certkit/certificates/api/admission';
import { parseServeFlags } from '../packages/cli/src/args.ts';

/**
 * A MEASUREMENT ONLY, never shipped: `certkit apiserver` as packages/cli/src/serve.ts starts it (same storage,
 * admission, token, limits, the flags' defaults), but over plain HTTP, so that bench/issuance-floor.ts can tell
 * what TLS adds to an issuance's API traffic. The API server serves plain HTTP when given no `tls` (its tests
 * do); the CLI never does. Writes `<data-dir>/kubeconfig` for http:// and prints "listening on http://…".
 *
 *   node bench/plain-http-apiserver.ts --data-dir DIR --port 0
 */

const flags = parseServeFlags(process.argv.slice(2));
const dataDir = resolve(flags.dataDir);
// Made as serve.ts makes them: the kubeconfig needs a CA (unused over http://), the bench reads pki/ca.crt.
const certificates = await ensureServingCertificates(dataDir, [flags.host]);
const token = await ensureToken(dataDir);
const storage = SqliteStorage.open(resolve(dataDir, 'state.db'), { synchronous: flags.sqliteSynchronous });
const compactor = startCompactor(storage, {});
const server = await ApiServer.start({
  storage,
  host: flags.host,
  port: flags.port,
  token,
  authorizationMode: flags.authorizationMode,
  serviceClusterIpRange: flags.serviceClusterIpRange,
  serviceNodePortRange: flags.serviceNodePortRange,
  watchCache: flags.watchCache,
  admission: certManagerAdmission,
  admissionMutation: certManagerMutation,
  storageInitializationTimeoutMs: flags.storageInitializationTimeoutMs,
  eventTtlMs: flags.eventTtlMs,
  maxRequestsInflight: flags.maxRequestsInflight,
  maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
});
await writeKubeconfig(resolve(dataDir, 'kubeconfig'), {
  server: `http://127.0.0.1:${server.port}`,
  caCertPem: certificates.caCertPem,
  token,
});
process.stdout.write(`plain-http-apiserver: listening on ${server.url}\n`);
process.once('SIGTERM', () => {
  void (async () => {
    compactor.stop();
    await server.close();
    await storage.close();
    process.exit(0);
  })();
});
