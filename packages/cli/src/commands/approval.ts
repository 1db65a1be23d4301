import type { CertificateRequest } from '@certkit/certificates/api/types';
import { setCondition } from '@certkit/certificates/controllers/conditions';
import { certificateRequestsRef } from '@certkit/certificates/controllers/refs';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';
import { type FlagTable, UsageError } from '../flags.ts';

/**
 * `certkit approve NAME` and `certkit deny NAME`, as cmctl's: set the CertificateRequest's Approved (or
 * Denied) condition through the status subresource, where approvers write it and where the API server's
 * admission makes the condition immutable once set. A request already approved or denied is refused here
 * first, with cmctl's words, rather than by the server's field error.
 */

export type Decision = 'approve' | 'deny';

const CONDITION = { approve: 'Approved', deny: 'Denied' } as const;
const PAST = { approve: 'Approved', deny: 'Denied' } as const;

/** Returns the line to print: `Approved CertificateRequest 'ns/name'`. */
export async function decide(decision: Decision, args: string[], table: FlagTable): Promise<string> {
  const flags = parseClusterFlags(args, table);
  const verb = decision === 'approve' ? 'approve' : 'deny';
  if (flags.positionals.length !== 1) {
    throw new UsageError(
      flags.positionals.length === 0
        ? `the name of the CertificateRequest to ${verb} has to be provided as an argument`
        : 'only one argument can be passed: the name of the CertificateRequest',
    );
  }
  if (flags.allNamespaces)
    throw new UsageError(`certkit ${verb} takes a namespace (-n), not --all-namespaces`);
  const reason = flags.values.reason as string;
  const message = flags.values.message as string;
  if (!reason)
    throw new UsageError(
      `a reason must be given as to who ${PAST[decision].toLowerCase()} this CertificateRequest`,
    );
  if (!message)
    throw new UsageError(
      `a message must be given as to why this CertificateRequest is ${PAST[decision].toLowerCase()}`,
    );
  const { client, namespace } = await clusterClient(flags);
  try {
    const requests = client.resource<CertificateRequest>(certificateRequestsRef);
    const cr = await requests.get(namespace, flags.positionals[0]);
    const has = (type: string) => cr.status?.conditions?.some((c) => c.type === type && c.status === 'True');
    if (has('Approved')) throw new Error('CertificateRequest is already approved');
    if (has('Denied')) throw new Error('CertificateRequest is already denied');
    const conditions = setCondition(
      cr.status?.conditions,
      { type: CONDITION[decision], status: 'True', reason, message },
      new Date(),
    );
    // With the read's resourceVersion: should an approver decide meanwhile, this write conflicts instead of
    // contradicting it (the server would refuse Approved beside Denied anyway).
    await requests.update({ ...cr, status: { ...cr.status, conditions } }, { subresource: 'status' });
    return `${PAST[decision]} CertificateRequest '${cr.metadata.namespace}/${cr.metadata.name}'\n`;
  } finally {
    client.close();
  }
}
