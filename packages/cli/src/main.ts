import { relative } from 'node:path';
import { parseServeFlags, UsageError } from './args.ts';
import { startControlPlane } from './serve.ts';

const USAGE = `usage: certkit <command> [flags]

commands:
  up         start certkit's control plane (API server; the certificate controller joins in a later release)
  apiserver  start the Kubernetes-compatible API server alone

flags of up and apiserver:
  --data-dir DIR   where state, certificates, the token and the kubeconfig live (default .certkit)
  --port N         port to listen on (default 6443; 0 picks a free one)
  --host ADDR      address to bind (default 127.0.0.1)
  --storage KIND   sqlite (default, in the data dir) or etcd
  --etcd-endpoints URL[,URL...]         etcd members, with --storage etcd
  --watch-cache true|false              serve reads and watches from caches (default true)
  --storage-initialization-timeout D    how long /readyz waits for the caches (default 1m)
`;

async function serve(command: string, args: string[]): Promise<void> {
  const flags = parseServeFlags(args);
  const plane = await startControlPlane(flags);
  const kubeconfig = relative(process.cwd(), plane.kubeconfigPath) || plane.kubeconfigPath;
  process.stdout.write(
    `certkit ${command}: API server listening on ${plane.server.url}\n` +
      `  kubeconfig: ${plane.kubeconfigPath}\n` +
      `  try:        kubectl --kubeconfig ${kubeconfig} get namespaces\n` +
      `  stop:       Ctrl-C\n`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`certkit: ${signal} received, stopping\n`);
    await plane.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up':
    case 'apiserver':
      return serve(command, rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}; run "certkit help" for the list`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`certkit: ${message}\n`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
