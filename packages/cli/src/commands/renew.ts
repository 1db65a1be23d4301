import { isConflict, parseLabelSelector } from '@certkit/apimachinery';
import type { Certificate } from '@certkit/certificates/api/types';
import { setCondition } from '@certkit/certificates/controllers/conditions';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import type { ResourceClient } from '@certkit/runtime';
import { UsageError } from '../flags.ts';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import type { FlagTable } from '../flags.ts';
import { countProgress, type Progress } from '../progress.ts';

/**
 * `certkit renew`: asks for re-issuance now, as `cmctl renew` does, by setting the Issuing condition with
 * reason ManuallyTriggered; the trigger controller leaves a Certificate alone while it is issuing. Which
 * Certificates, as cmctl takes them: names in the namespace (-n, else the kubeconfig's), or `--all`, or
 * `-l/--selector`, in one namespace or with `-A/--all-namespaces` in all of them.
 */

/** Status updates in flight at once: enough to keep a remote API server busy, few enough to be polite. */
const CONCURRENT_UPDATES = 8;

/**
 * Where the command writes: one line per Certificate on `out` as it goes, "nothing found" on `err`, and how
 * many are done on `progress` (a line on a terminal only).
 */
export interface RenewOutput {
  out(text: string): void;
  err(text: string): void;
  progress?: Progress;
}

interface Selection {
  names: string[];
  all: boolean;
  selector?: string;
  allNamespaces: boolean;
}

/** cmctl's rules (pkg/renew Validate): exactly one of names, --all and a selector; no names with -A. */
function validate(selection: Selection): void {
  const { names, all, selector, allNamespaces } = selection;
  if (selector !== undefined && all)
    throw new UsageError('cannot specify label selectors in conjunction with --all flag');
  if (names.length === 0) {
    if (!all && selector === undefined)
      throw new UsageError(
        'please either supply one or more Certificate resource names, label selectors, or use the --all flag to renew all Certificate resources',
      );
    return;
  }
  if (selector !== undefined)
    throw new UsageError('cannot specify Certificate names in conjunction with label selectors');
  if (all) throw new UsageError('cannot specify Certificate names in conjunction with --all flag');
  if (allNamespaces)
    throw new UsageError('cannot specify Certificate names in conjunction with --all-namespaces flag');
}

function rate(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || (n <= 0 && n !== -1))
    throw new UsageError(`--${flag} must be a positive number, or -1 to turn client-side limits off`);
  return n;
}

export async function renew(args: string[], table: FlagTable, output: RenewOutput): Promise<void> {
  const flags = parseClusterFlags(args, table);
  const selection: Selection = {
    names: flags.positionals,
    all: flags.values.all === true,
    selector: flags.values.selector as string | undefined,
    allNamespaces: flags.allNamespaces,
  };
  validate(selection);
  if (selection.selector !== undefined) {
    try {
      parseLabelSelector(selection.selector);
    } catch (err) {
      throw new UsageError(`invalid --selector: ${(err as Error).message}`);
    }
  }
  const qps = rate('kube-api-qps', String(flags.values['kube-api-qps']));
  const burst = rate('kube-api-burst', String(flags.values['kube-api-burst']));
  const { client, namespace } = await clusterClient(flags, { qps, burst });
  try {
    const certificates = client.resource<Certificate>(certificatesRef);
    const found = await selected(certificates, selection, namespace);
    if (found.length === 0) {
      output.err(
        selection.allNamespaces
          ? 'No Certificates found\n'
          : `No Certificates found in ${namespace} namespace.\n`,
      );
      return;
    }
    const progress = output.progress;
    let done = 0;
    progress?.update(countProgress('Renewing', 0, found.length, 'Certificates'), { force: true });
    await inOrder(
      found,
      CONCURRENT_UPDATES,
      (cert) => trigger(certificates, cert),
      (text) => {
        // The count first: printing the line redraws the status line below it with the new count.
        progress?.update(countProgress('Renewing', ++done, found.length, 'Certificates'));
        output.out(text);
      },
    );
  } finally {
    output.progress?.done();
    client.close();
  }
}

/**
 * The Certificates to renew. Names are read one by one (a missing one fails the command, as in cmctl);
 * --all and selectors are one LIST, cluster-wide with -A (cmctl lists Namespaces and then each one; a
 * single list gives the same Certificates in one request).
 */
async function selected(
  certificates: ResourceClient<Certificate>,
  selection: Selection,
  namespace: string,
): Promise<Certificate[]> {
  if (selection.names.length > 0) {
    const out: Certificate[] = [];
    for (const name of selection.names) out.push(await certificates.get(namespace, name));
    return out;
  }
  const list = await certificates.list(selection.allNamespaces ? undefined : namespace, {
    labelSelector: selection.selector || undefined,
  });
  return list.items;
}

/**
 * Runs `work` over `items` with up to `concurrency` at once and writes each result in the items' order,
 * as soon as it and every earlier one are done; the first failure stops new work and is thrown.
 */
async function inOrder<T>(
  items: T[],
  concurrency: number,
  work: (item: T) => Promise<string>,
  write: (text: string) => void,
): Promise<void> {
  const results: (string | undefined)[] = new Array(items.length);
  let next = 0;
  let written = 0;
  let failed: unknown;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (failed === undefined && next < items.length) {
        const i = next++;
        try {
          results[i] = await work(items[i]);
        } catch (err) {
          failed ??= err;
          return;
        }
        while (written < items.length && results[written] !== undefined) {
          write(results[written]!);
          results[written++] = '';
        }
      }
    }),
  );
  if (failed !== undefined) throw failed;
}

/** Sets Issuing=True ManuallyTriggered on one Certificate, re-reading it after a conflict. */
async function trigger(certificates: ResourceClient<Certificate>, listed: Certificate): Promise<string> {
  const namespace = listed.metadata.namespace!;
  const name = listed.metadata.name!;
  let cert = listed;
  for (let attempt = 0; ; attempt++) {
    const issuing = cert.status?.conditions?.find((c) => c.type === 'Issuing');
    if (issuing?.status === 'True') return `certificate ${namespace}/${name} is already being issued\n`;
    // In place, as cmctl's apiutil.SetCertificateCondition: the other conditions keep their order.
    const conditions = setCondition(
      cert.status?.conditions,
      {
        type: 'Issuing',
        status: 'True',
        reason: 'ManuallyTriggered',
        message: 'Certificate re-issuance manually triggered',
        observedGeneration: cert.metadata?.generation,
      },
      new Date(),
    );
    try {
      await certificates.update(
        { ...cert, status: { ...cert.status, conditions } },
        { subresource: 'status' },
      );
      return `Manually triggered issuance of Certificate ${namespace}/${name}\n`;
    } catch (err) {
      if (!isConflict(err) || attempt >= 5)
        throw new Error(
          `failed to trigger issuance of Certificate ${namespace}/${name}: ${(err as Error).message}`,
          { cause: err },
        );
    }
    cert = await certificates.get(namespace, name);
  }
}
