import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient, loadClientConfig } from '@certkit/runtime';
import { CLUSTER_FLAGS } from './commands/flag-tables.ts';
import { type FlagTable, type FlagValues, parseFlags } from './flags.ts';

/** The flags every command that talks to a cluster takes, as kubectl spells them. */
export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces: boolean;
  positionals: string[];
}

export function parseClusterFlags(
  args: string[],
  extra: FlagTable = {},
): ClusterFlags & {
  values: FlagValues;
} {
  const { values: v, positionals } = parseFlags({ ...CLUSTER_FLAGS, ...extra }, args, { positionals: true });
  return {
    kubeconfig: v.kubeconfig as string | undefined,
    context: v.context as string | undefined,
    namespace: v.namespace as string | undefined,
    allNamespaces: v['all-namespaces'] === true,
    positionals,
    values: v,
  };
}

/** Where `certkit up` (and `npm start`) write the kubeconfig, relative to where they run. */
const UP_KUBECONFIG = join('.certkit', 'kubeconfig');

/**
 * No kubeconfig found, in a directory where `certkit up` wrote one: the usual first mistake is a second
 * terminal without `export KUBECONFIG=.certkit/kubeconfig`, so the error says so.
 */
export function withUpKubeconfigHint(err: unknown, flags: ClusterFlags): unknown {
  if (flags.kubeconfig || process.env.KUBECONFIG || !existsSync(UP_KUBECONFIG)) return err;
  if (!(err instanceof Error) || !err.message.startsWith('no kubeconfig:')) return err;
  return new Error(
    `${err.message}; certkit up wrote ${UP_KUBECONFIG} here: export KUBECONFIG=${UP_KUBECONFIG}, or pass --kubeconfig ${UP_KUBECONFIG}`,
    { cause: err },
  );
}

/** A client for the cluster the flags name: --kubeconfig, else $KUBECONFIG, else in-cluster, else ~/.kube/config. */
export async function clusterClient(
  flags: ClusterFlags,
  limits: { qps?: number; burst?: number } = {},
): Promise<{ client: KubeClient; namespace: string }> {
  const config = await loadClientConfig({ path: flags.kubeconfig, context: flags.context }).catch(
    (err: unknown) => {
      throw withUpKubeconfigHint(err, flags);
    },
  );
  const client = new KubeClient({ ...config, ...limits });
  return { client, namespace: flags.namespace ?? client.namespace };
}

/** kubectl's plain table: upper-case headers, columns padded to their widest cell and three spaces apart. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd();
  return `${[line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n')}\n`;
}
