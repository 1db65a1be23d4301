import { isConflict } from '@certkit/apimachinery';
import type { Certificate } from '@certkit/certificates/api/types';
import { setCondition } from '@certkit/certificates/controllers/conditions';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import { UsageError } from '../args.ts';
import { clusterClient, parseClusterFlags } from '../cluster-flags.ts';

/**
 * `certkit renew NAME...`: asks for re-issuance now, as `cmctl renew` does, by setting the Issuing condition
 * with reason ManuallyTriggered; the trigger controller leaves a Certificate alone while it is issuing.
 */
export async function renew(args: string[]): Promise<string> {
  const flags = parseClusterFlags(args);
  if (flags.positionals.length === 0)
    throw new UsageError('renew needs the name of at least one Certificate');
  const { client, namespace } = await clusterClient(flags);
  const certificates = client.resource<Certificate>(certificatesRef);
  let out = '';
  try {
    for (const name of flags.positionals) {
      for (let attempt = 0; ; attempt++) {
        const cert = await certificates.get(namespace, name);
        const issuing = cert.status?.conditions?.find((c) => c.type === 'Issuing');
        if (issuing?.status === 'True') {
          out += `certificate ${namespace}/${name} is already being issued\n`;
          break;
        }
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
          out += `Manually triggered issuance of Certificate ${namespace}/${name}\n`;
          break;
        } catch (err) {
          if (!isConflict(err) || attempt >= 5) throw err;
        }
      }
    }
    return out;
  } finally {
    client.close();
  }
}
