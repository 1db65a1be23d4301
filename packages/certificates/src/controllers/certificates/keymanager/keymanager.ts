import { isAlreadyExists, isNotFound, type KubeObject } from '@certkit/apimachinery';
import type { Reconciler, Request } from '@certkit/runtime';
import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { Labels, SecretKeys } from '../../../api/constants.ts';
import { defaultPrivateKey } from '../../../api/defaults.ts';
import type { Certificate } from '../../../api/types.ts';
import { encodePrivateKey, parsePrivateKey, privateKeySpecViolations } from '../../../pki/index.ts';
import type { ControllerContext } from '../../context.ts';
import { liveCertificate } from '../shared/gather.ts';
import { certificateOwnerReference } from '../shared/owner-reference.ts';
import { hasSecretBytes, rememberPrivateKey, secretBytes, secretPrivateKey } from '../../parsed.ts';
import { invalidSpec } from '../shared/policies.ts';
import { hasCondition, resultOf, setField, updateStatus } from '../shared/status.ts';
import { STALE_RETRY_MS, StaleReads } from '../../issuers/stale-reads.ts';
import { KeyGenerations } from './key-generations.ts';

/**
 * certificates-key-manager: while Issuing=True, keeps exactly one "next private key" Secret for the
 * Certificate (owned by it, labelled so the full Secret cache holds it) and names it in
 * status.nextPrivateKeySecretName; once issuance is over, deletes it and clears the name.
 *
 * The issuing controller finds the key through status.nextPrivateKeySecretName alone, and ends an issuance
 * through the status (Issuing removed or False, the name cleared on success): nothing else passes between
 * the two, so deleting the used key is this controller's, as in cert-manager.
 */

export const KEY_MANAGER_CONTROLLER = 'certificates-key-manager';

/** This controller's Event recorder: its Events name it as their source (docs/adr/0903). */
const events = (ctx: ControllerContext) => ctx.recorder.from(KEY_MANAGER_CONTROLLER);

/** Selects the next-key Secrets; the fao label keeps them in the full cache (docs/adr/0010). */
export const NEXT_PRIVATE_KEY_SELECTOR = `${Labels.isNextPrivateKeySecret}=true`;

/** `requeue` queues a Certificate again: the key generations use it to say a key is ready. */
export function keyManagerReconciler(
  ctx: ControllerContext,
  requeue: (request: Request) => void,
): Reconciler {
  const keys = new KeyGenerations({
    ready: (certificate) => {
      const slash = certificate.indexOf('/');
      requeue({ namespace: certificate.slice(0, slash), name: certificate.slice(slash + 1) });
    },
  });
  // Our status writes outrun the cache: a reconcile that still sees the version our last write replaced
  // (without the next key's name) would make a second key. It stands down until the write's event arrives.
  const stale = new StaleReads();
  const setNextKeyName = async (cert: Certificate, name: string | undefined, signal: AbortSignal) => {
    const write = await updateStatus(
      ctx,
      cert,
      (status) => setField(status, 'nextPrivateKeySecretName', name),
      signal,
    );
    const key = `${cert.metadata.namespace}/${cert.metadata.name}`;
    if (write === 'written') stale.wrote(key, cert.metadata.resourceVersion);
    return resultOf(write);
  };

  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    const key = `${request.namespace}/${request.name}`;
    if (!cert) {
      keys.forget(key);
      return stale.forget(key);
    }
    if (stale.isStale(key, cert.metadata.resourceVersion)) return { requeueAfter: STALE_RETRY_MS };
    const secrets = ctx.secrets.listLabelledControlledBy(cert, NEXT_PRIVATE_KEY_SELECTOR);

    if (!hasCondition(cert, 'Issuing', 'True')) {
      keys.forget(key);
      await deleteSecrets(ctx, secrets, signal);
      return setNextKeyName(cert, undefined, signal);
    }

    // The readiness controller reports invalid specs (say, an RSA size out of range); no key is made for one.
    if (invalidSpec(cert)) return keys.forget(key);
    // Runtime defaults: rotationPolicy Always, RSA 2048 / P-256. Only the key's: defaulting the whole
    // Certificate deep-copied it, status and managed fields included, at every reconcile (docs/adr/1151).
    const privateKey = defaultPrivateKey(cert.spec.privateKey);
    if (secrets.length === 0) {
      const named = cert.status?.nextPrivateKeySecretName;
      // Named but not cached: either the cache has yet to see the Secret, or it was deleted.
      if (named && (await secretExists(ctx, cert.metadata.namespace ?? '', named, signal))) {
        return { requeueAfter: STALE_RETRY_MS };
      }
      const created =
        privateKey.rotationPolicy === 'Never'
          ? await createReusingCurrentKey(ctx, keys, cert, signal)
          : await createWithNewKey(ctx, keys, cert, signal);
      return created === undefined ? undefined : setNextKeyName(cert, created, signal);
    }
    keys.forget(key);
    if (secrets.length > 1) {
      // Keep the one the status names, if any: the others are leftovers of races.
      const keep = cert.status?.nextPrivateKeySecretName;
      await deleteSecrets(
        ctx,
        secrets.filter((s) => s.metadata?.name !== keep),
        signal,
      );
      return;
    }

    const secret = secrets[0];
    const name = secret.metadata?.name ?? '';
    const current = cert.status?.nextPrivateKeySecretName;
    if (!current) return setNextKeyName(cert, name, signal);
    if (current !== name) return deleteSecrets(ctx, [secret], signal);

    const parsed = hasSecretBytes(secret, SecretKeys.tlsKey) ? secretPrivateKey(secret) : undefined;
    if (!parsed || 'error' in parsed) return deleteSecrets(ctx, [secret], signal);
    const violations = privateKeySpecViolations(parsed.value, privateKey);
    if (violations.length) {
      events(ctx).normal(
        cert,
        'Deleted',
        `Regenerating private key due to change in fields: [${violations.join(' ')}]`,
      );
      return deleteSecrets(ctx, [secret], signal);
    }
    return;
  };
}

/**
 * rotationPolicy Never: the next key is the key already in spec.secretName, if it still fits the spec. The
 * Secret's name, or undefined when there is none yet (a new key is being generated, or none may be).
 */
async function createReusingCurrentKey(
  ctx: ControllerContext,
  keys: KeyGenerations,
  cert: Certificate,
  signal: AbortSignal,
): Promise<string | undefined> {
  const secretName = cert.spec.secretName;
  const existing = await ctx.secrets.getWithData(cert.metadata.namespace ?? '', secretName);
  const data = secretBytes(existing, SecretKeys.tlsKey);
  if (!data) return createWithNewKey(ctx, keys, cert, signal);
  let key: KeyObject;
  try {
    key = parsePrivateKey(data);
  } catch {
    events(ctx).warning(
      cert,
      'DecodeFailed',
      `Failed to decode private key stored in Secret "${secretName}" - generating new key`,
    );
    return createWithNewKey(ctx, keys, cert, signal);
  }
  const violations = privateKeySpecViolations(key, defaultPrivateKey(cert.spec.privateKey));
  if (violations.length) {
    events(ctx).warning(
      cert,
      'CannotRegenerateKey',
      `User intervention required: existing private key in Secret "${secretName}" does not match requirements on Certificate resource, mismatching fields: [${violations.join(' ')}], but cert-manager cannot create new private key as the Certificate's .spec.privateKey.rotationPolicy is unset or set to Never. To allow cert-manager to create a new private key you can set .spec.privateKey.rotationPolicy to 'Always' (this will result in the private key being regenerated every time a cert is renewed) `,
    );
    return;
  }
  const created = await createNextKeySecret(ctx, cert, key, signal);
  events(ctx).normal(
    cert,
    'Reused',
    `Reusing private key stored in existing Secret resource "${secretName}"`,
  );
  return created.metadata?.name;
}

/**
 * A new key in a new next-key Secret; its name. Undefined while the key is being generated: the Certificate
 * is queued again when it is ready.
 */
async function createWithNewKey(
  ctx: ControllerContext,
  keys: KeyGenerations,
  cert: Certificate,
  signal: AbortSignal,
): Promise<string | undefined> {
  const spec = defaultPrivateKey(cert.spec.privateKey);
  const key = keys.take(`${cert.metadata.namespace}/${cert.metadata.name}`, {
    algorithm: spec.algorithm,
    size: spec.size,
  });
  if (!key) return undefined;
  const created = await createNextKeySecret(ctx, cert, key, signal);
  const name = created.metadata?.name;
  events(ctx).normal(cert, 'Generated', `Stored new private key in temporary Secret resource "${name}"`);
  return name;
}

/** Whether the Secret exists, asked live (the caller found it missing from the cache). */
async function secretExists(ctx: ControllerContext, namespace: string, name: string, signal: AbortSignal) {
  try {
    await ctx.secretClient.get(namespace, name, { signal });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Creates the next-key Secret: named as status.nextPrivateKeySecretName when that is set (the reconcile made
 * sure the cached status is not older than our last write of it), else `<certificate>-<random>`.
 */
async function createNextKeySecret(
  ctx: ControllerContext,
  cert: Certificate,
  key: KeyObject,
  signal: AbortSignal,
): Promise<Secret> {
  const namespace = cert.metadata.namespace ?? '';
  const name = cert.status?.nextPrivateKeySecretName;
  const secret: Secret & KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      namespace,
      ...(name ? { name } : { generateName: `${cert.metadata.name}-` }),
      ownerReferences: [certificateOwnerReference(cert)],
      labels: { [Labels.isNextPrivateKeySecret]: 'true', [Labels.partOfCertManagerController]: 'true' },
    },
    data: { [SecretKeys.tlsKey]: rememberPrivateKey(encodePrivateKey(key, 'PKCS8'), key) },
  };
  try {
    return await ctx.secretClient.create(namespace, secret, { signal });
  } catch (err) {
    // The cache had not seen the Secret the status names yet: it is there.
    if (isAlreadyExists(err) && name) return ctx.secretClient.get(namespace, name, { signal });
    throw err;
  }
}

/**
 * Next-key Secrets a delete was sent for, as the cache's objects: several reconciles of the same status
 * change (the issuance ending) run before the Secret's deletion reaches the cache, and each would otherwise
 * send a delete that can only answer 404.
 */
const deleting = new WeakSet<Secret>();

/** Deletes cached next-key Secrets (each once), with a uid precondition so that a newer one is spared. */
async function deleteSecrets(ctx: ControllerContext, secrets: readonly Secret[], signal: AbortSignal) {
  for (const secret of secrets) {
    if (deleting.has(secret)) continue;
    deleting.add(secret);
    try {
      await ctx.secretClient.delete(secret.metadata?.namespace, secret.metadata?.name ?? '', {
        signal,
        preconditions: { uid: secret.metadata?.uid },
      });
    } catch (err) {
      if (isNotFound(err)) continue;
      // Not deleted after all: the retry must send it again.
      deleting.delete(secret);
      throw err;
    }
  }
}
