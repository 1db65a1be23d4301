/**
 * The controller under its own identity: the RBAC manifest (deploy/rbac.yaml) applied with an admin client,
 * and a client configuration that authenticates as the manifest's ServiceAccount with tokens from the
 * TokenRequest API. Every request the controller then makes is authorised by the roles users deploy, not by
 * the admin's system:masters bypass.
 */

import { isAlreadyExists, isConflict, type KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  type ClientConfig,
  type KubeClient,
  type ResourceRef,
  tokenRequestCredentials,
} from '@certkit/runtime';
import { parseAllDocuments } from 'yaml';
import { withLastAppliedConfiguration } from '../api/last-applied.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** The kinds an RBAC manifest may hold, so applying it needs no discovery. */
const MANIFEST_KINDS: Record<string, ResourceRef> = {
  'v1/Namespace': builtins.namespaces,
  'v1/ServiceAccount': builtins.serviceAccounts,
  [`${RBAC_GROUP}/v1/ClusterRole`]: rbac('clusterroles', 'ClusterRole', false),
  [`${RBAC_GROUP}/v1/ClusterRoleBinding`]: rbac('clusterrolebindings', 'ClusterRoleBinding', false),
  [`${RBAC_GROUP}/v1/Role`]: rbac('roles', 'Role', true),
  [`${RBAC_GROUP}/v1/RoleBinding`]: rbac('rolebindings', 'RoleBinding', true),
};

function rbac(resource: string, kind: string, namespaced: boolean): ResourceRef {
  return { group: RBAC_GROUP, version: 'v1', resource, kind, namespaced };
}

/** A ServiceAccount by namespace and name. */
export interface ServiceAccountName {
  namespace: string;
  name: string;
}

/** The manifest's objects; a document that is not an object with apiVersion, kind and name is an error. */
export function parseRbacManifest(manifest: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const [index, document] of parseAllDocuments(manifest).entries()) {
    if (document.errors.length > 0) {
      throw new Error(`RBAC manifest document ${index + 1}: ${document.errors[0]!.message}`);
    }
    const obj = document.toJSON() as KubeObject | null;
    if (obj === null) continue;
    const key = `${obj.apiVersion}/${obj.kind}`;
    if (!MANIFEST_KINDS[key]) {
      throw new Error(
        `RBAC manifest document ${index + 1}: ${key} is not one of ${Object.keys(MANIFEST_KINDS).join(', ')}`,
      );
    }
    if (!obj.metadata?.name) throw new Error(`RBAC manifest document ${index + 1}: no metadata.name`);
    objects.push(obj);
  }
  return objects;
}

/** The one ServiceAccount the manifest defines: the identity its bindings grant to. */
export function manifestServiceAccount(objects: KubeObject[]): ServiceAccountName {
  const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
  if (accounts.length !== 1) {
    throw new Error(`the RBAC manifest defines ${accounts.length} ServiceAccounts; it must define one`);
  }
  const { namespace, name } = accounts[0]!.metadata!;
  if (!namespace) throw new Error(`the RBAC manifest's ServiceAccount ${name} has no metadata.namespace`);
  return { namespace, name: name! };
}

/**
 * Creates each object of the manifest, or replaces it where it exists (what `kubectl apply` of an unchanged
 * file ends with), in the manifest's order: the Namespace before what lives in it. Each carries the
 * annotation `kubectl apply` writes, so applying the file with kubectl afterwards finds it as a first
 * `kubectl apply` would have left it (docs/adr/1865).
 */
export async function applyRbacManifest(admin: KubeClient, manifest: KubeObject[]): Promise<void> {
  for (const obj of manifest.map(withLastAppliedConfiguration)) {
    const ref = MANIFEST_KINDS[`${obj.apiVersion}/${obj.kind}`]!;
    const resource = admin.resource(ref);
    const { namespace, name } = obj.metadata!;
    for (let attempt = 0; ; attempt++) {
      try {
        await resource.create(namespace, obj);
        break;
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      // A Namespace or ServiceAccount that exists is kept as it is: replacing a ServiceAccount would drop
      // what others added to it, and nothing of ours is in their specs.
      if (obj.kind === 'Namespace' || obj.kind === 'ServiceAccount') break;
      try {
        const current = await resource.get(namespace, name!);
        await resource.update({ ...obj, metadata: { ...current.metadata, ...obj.metadata } });
        break;
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }
}

export interface ControllerIdentityOptions {
  /** Lifetime requested for each token; default one hour, refreshed at 80% of it. */
  tokenExpirationSeconds?: number;
  /** Clock for the token refresh, for tests. */
  now?: () => number;
}

/** What `controllerIdentity` returns: who the controller is and how its client authenticates. */
export interface ControllerIdentity {
  serviceAccount: ServiceAccountName;
  /** The username the API server sees: `system:serviceaccount:<namespace>:<name>`. */
  username: string;
  /** `admin`'s server and trust, with the ServiceAccount's tokens instead of the admin's credentials. */
  config: ClientConfig;
}

/**
 * Applies `manifest` (deploy/rbac.yaml's text) with `admin` and returns a client configuration for the
 * ServiceAccount it binds. `admin` must stay open while the configuration is used: it requests the tokens.
 */
export async function controllerIdentity(
  admin: KubeClient,
  manifest: string,
  options: ControllerIdentityOptions = {},
): Promise<ControllerIdentity> {
  const objects = parseRbacManifest(manifest);
  const serviceAccount = manifestServiceAccount(objects);
  await applyRbacManifest(admin, objects);
  const { token: _token, cert: _cert, key: _key, credentials: _credentials, ...transport } = admin.config;
  return {
    serviceAccount,
    username: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`,
    config: {
      ...transport,
      namespace: serviceAccount.namespace,
      credentials: tokenRequestCredentials(admin.resource(builtins.serviceAccounts), {
        ...serviceAccount,
        expirationSeconds: options.tokenExpirationSeconds,
        now: options.now,
      }),
    },
  };
}
