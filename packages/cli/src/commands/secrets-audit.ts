import { isNotFound } from '@certkit/apimachinery';
import { acmeSecretReferences } from '@certkit/certificates/acme/secret-references';
import type { ACMEIssuer } from '@certkit/certificates/api/acme-types';
import type { Certificate, ClusterIssuer, Issuer } from '@certkit/certificates/api/types';
import { certificatesRef, clusterIssuersRef, issuersRef } from '@certkit/certificates/controllers/refs';
import { builtins } from '@certkit/runtime';
import { clusterClient, formatTable, parseClusterFlags } from '../cluster-flags.ts';
import { type FlagTable, UsageError } from '../flags.ts';

const LABEL = 'controller.cert-manager.io/fao';

/**
 * `certkit secrets audit`: Secrets the controller reads but does not write, and so does not label for its full
 * cache: CA key pairs of Issuers and ClusterIssuers (a live GET per signing), ACME issuers' account keys, EAB
 * keys and DNS-01 credentials, and the keystore password Secrets of Certificates (a live GET per keystore
 * written). Prints each unlabelled or missing one, with the command that labels it.
 */
export async function secretsAudit(args: string[], table: FlagTable): Promise<string> {
  const flags = parseClusterFlags(args, table);
  if (flags.positionals.length > 0) {
    throw new UsageError(
      `certkit secrets audit takes no arguments, got ${JSON.stringify(flags.positionals[0])}`,
    );
  }
  const clusterNamespace = String(flags.values['cluster-resource-namespace']);
  const { client, namespace } = await clusterClient(flags);
  try {
    const scope = flags.allNamespaces ? undefined : namespace;
    const referenced: { by: string; namespace: string; secret: string; optional?: boolean }[] = [];
    /** An ACME issuer's Secrets; an account key the controller will generate is not missing yet. */
    const acme = (by: string, ns: string, spec: ACMEIssuer | undefined) => {
      if (!spec) return;
      const seen = new Set<string>();
      for (const ref of acmeSecretReferences(spec)) {
        if (seen.has(ref.name)) continue;
        seen.add(ref.name);
        const generated =
          ref.field.endsWith('.privateKeySecretRef') && spec.disableAccountKeyGeneration !== true;
        referenced.push({ by, namespace: ns, secret: ref.name, optional: generated });
      }
    };
    const issuers = (await client.resource<Issuer>(issuersRef).list(scope)).items;
    const clusterIssuers = (await client.resource<ClusterIssuer>(clusterIssuersRef).list(undefined)).items;
    const certificates = (await client.resource<Certificate>(certificatesRef).list(scope)).items;
    for (const i of issuers) {
      acme(`Issuer/${i.metadata?.name}`, i.metadata?.namespace ?? '', i.spec?.acme);
      const secret = i.spec?.ca?.secretName;
      if (secret)
        referenced.push({
          by: `Issuer/${i.metadata?.name}`,
          namespace: i.metadata?.namespace ?? '',
          secret,
        });
    }
    for (const i of clusterIssuers) {
      acme(`ClusterIssuer/${i.metadata?.name}`, clusterNamespace, i.spec?.acme);
      const secret = i.spec?.ca?.secretName;
      if (secret)
        referenced.push({ by: `ClusterIssuer/${i.metadata?.name}`, namespace: clusterNamespace, secret });
    }
    for (const c of certificates) {
      for (const keystore of [c.spec?.keystores?.jks, c.spec?.keystores?.pkcs12]) {
        const secret = keystore?.create ? keystore.passwordSecretRef?.name : undefined;
        if (secret)
          referenced.push({
            by: `Certificate/${c.metadata?.name}`,
            namespace: c.metadata?.namespace ?? '',
            secret,
          });
      }
    }
    // Metadata only: the audit needs labels, not key material.
    const secrets = client.resource(builtins.secrets, 'metadata');
    const rows: string[][] = [];
    for (const ref of referenced) {
      let state: string;
      try {
        const meta = await secrets.get(ref.namespace, ref.secret);
        if (meta.metadata?.labels?.[LABEL] === 'true') continue;
        state = 'not labelled';
      } catch (err) {
        if (!isNotFound(err)) throw err;
        if (ref.optional) continue;
        state = 'missing';
      }
      rows.push([
        ref.namespace,
        ref.secret,
        ref.by,
        state,
        state === 'missing' ? '-' : `kubectl label secret -n ${ref.namespace} ${ref.secret} ${LABEL}=true`,
      ]);
    }
    if (rows.length === 0)
      return `Every Secret referenced by an issuer or a keystore is labelled ${LABEL}=true.\n`;
    return formatTable(['namespace', 'secret', 'referenced by', 'state', 'fix'], rows);
  } finally {
    client.close();
  }
}
