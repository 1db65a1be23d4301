import { isForbidden, isNotFound, type KubeObject } from '@certkit/apimachinery';
import { builtins, type Client, type Logger } from '@certkit/runtime';
import { Annotations } from '../api/constants.ts';
import type { Certificate } from '../api/types.ts';
import { certificatesRef } from '../controllers/refs.ts';
import type { CASource } from './sources.ts';

/** The key of a Secret that holds the CA a target is to trust. */
const CA_KEY = 'ca.crt';

/** What reading a source needs: a client, where sources may be, the API server's CA, a logger. */
export interface CAReaderContext {
  client: Client;
  /** `--namespace`: only sources in this namespace may be read (all when absent). */
  namespace?: string;
  /** `--ignore-namespaces`: sources in these namespaces are never read. */
  ignoreNamespaces: ReadonlySet<string>;
  /** The CA of the cainjector's own connection to the API server (its kubeconfig or service account). */
  apiserverCA?: string;
  log: Logger;
}

/**
 * The CA data a source holds, read live (Secrets are never cached in full here: docs/adr/1880), or undefined
 * when there is none to inject: a missing Certificate or Secret, a Secret that does not allow direct injection
 * or is not the Certificate's, no `ca.crt`, a source outside the namespaces allowed. Each of those is logged
 * and not retried, as cainjector does: the Secret's next change queues the target again. Other errors (the
 * API server unreachable) are thrown, and the target is retried with backoff.
 */
export async function readCA(
  ctx: CAReaderContext,
  source: CASource,
  target: string,
): Promise<Buffer | undefined> {
  const skip = (msg: string, fields: Record<string, unknown> = {}) => {
    ctx.log({ level: 'info', msg, target, ...fields });
    return undefined;
  };
  if (source.kind === 'apiserver') {
    if (!ctx.apiserverCA) return skip('no API server CA to inject: the client trusts the system roots');
    return Buffer.from(ctx.apiserverCA);
  }
  if (
    (ctx.namespace !== undefined && source.namespace !== ctx.namespace) ||
    ctx.ignoreNamespaces.has(source.namespace)
  ) {
    return skip('cainjector is forbidden to read the CA source: its namespace is not watched', {
      source: `${source.namespace}/${source.name}`,
    });
  }
  const secrets = ctx.client.resource<KubeObject & { data?: Record<string, string> }>(builtins.secrets);
  let secretName = source.name;
  if (source.kind === 'certificate') {
    let certificate: Certificate;
    try {
      certificate = await ctx.client
        .resource<Certificate>(certificatesRef)
        .get(source.namespace, source.name);
    } catch (err) {
      if (isNotFound(err) || isForbidden(err))
        return skip('unable to fetch the Certificate to inject the CA of', {
          certificate: `${source.namespace}/${source.name}`,
          err: (err as Error).message,
        });
      throw err;
    }
    secretName = certificate.spec.secretName;
  }
  let secret;
  try {
    secret = await secrets.get(source.namespace, secretName);
  } catch (err) {
    if (isNotFound(err) || isForbidden(err))
      return skip('unable to fetch the Secret to inject the CA of', {
        secret: `${source.namespace}/${secretName}`,
        err: (err as Error).message,
      });
    throw err;
  }
  const annotations = secret.metadata?.annotations ?? {};
  if (source.kind === 'secret' && annotations[Annotations.allowDirectInjection] !== 'true') {
    return skip(
      `Secret resource does not allow direct injection (annotation ${Annotations.allowDirectInjection}: "true"): refusing to inject its CA`,
      { secret: `${source.namespace}/${secretName}` },
    );
  }
  // The Secret must be the Certificate's (its annotation, as cert-manager checks), not one a user named the
  // same to have their CA trusted in its place.
  if (source.kind === 'certificate' && annotations[Annotations.certificateName] !== source.name) {
    return skip('refusing to inject from a Secret not owned by the Certificate', {
      secret: `${source.namespace}/${secretName}`,
      certificate: `${source.namespace}/${source.name}`,
      owner: annotations[Annotations.certificateName],
    });
  }
  const ca = secret.data?.[CA_KEY];
  if (!ca)
    return skip(`the Secret has no ${CA_KEY} to inject`, { secret: `${source.namespace}/${secretName}` });
  return Buffer.from(ca, 'base64');
}
