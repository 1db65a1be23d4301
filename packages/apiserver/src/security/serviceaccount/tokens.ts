import { newBadRequest, newConflict, newNotFound } from '@certkit/apimachinery';
import type { Registry } from '../../registry/registry.ts';
import type { WatchCaches } from '../../watchcache/caches.ts';
import { ServiceAccountTokenAuthenticator } from './authenticator.ts';
import { type ObjectRef, tokenClaims } from './claims.ts';
import {
  resolveTokenConfig,
  type ServiceAccountTokenConfig,
  type ServiceAccountTokenOptions,
} from './config.ts';
import { type DiscoveryDocuments, discoveryDocuments } from './oidc.ts';
import { signToken } from './issuer.ts';
import { ObjectLookup } from './objects.ts';

/** What a TokenRequest asks for, defaults applied and validated (TokenRequestSpec). */
export interface TokenSpec {
  audiences: string[];
  expirationSeconds: number;
  boundObjectRef?: { kind?: string; apiVersion?: string; name?: string; uid?: string };
}

export interface IssuedToken {
  token: string;
  /** The audiences written into it: the request's, or the API audiences when it named none. */
  audiences: string[];
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * ServiceAccount tokens on one server: issuing them (the TokenRequest API), authenticating them, and the
 * issuer discovery documents, all from the same configuration and keys.
 */
export class ServiceAccountTokens {
  readonly config: ServiceAccountTokenConfig;
  readonly authenticator: ServiceAccountTokenAuthenticator;
  private readonly objects: ObjectLookup;
  private readonly now: () => number;
  private documents: { jwksUri: string; documents: DiscoveryDocuments | undefined } | undefined;

  constructor(
    options: ServiceAccountTokenOptions,
    registry: Registry,
    caches: WatchCaches,
    now: () => number = Date.now,
  ) {
    this.config = resolveTokenConfig(options);
    this.objects = new ObjectLookup(registry, caches);
    this.now = now;
    this.authenticator = new ServiceAccountTokenAuthenticator(this.config, this.objects, now);
  }

  /**
   * A token for ServiceAccount `namespace/name`, as kube-apiserver's TokenREST.Create issues it: the
   * ServiceAccount must exist (404 otherwise); a bound object must be a core v1 Pod running as that
   * ServiceAccount or a Secret, existing, with the uid given if one is; nothing is stored.
   */
  async issue(namespace: string, name: string, spec: TokenSpec): Promise<IssuedToken> {
    const sa = await this.objects.object('serviceaccounts', namespace, name);
    if (!sa) throw newNotFound({ group: '', resource: 'serviceaccounts' }, name);
    const bound = spec.boundObjectRef
      ? await this.boundObject(namespace, name, spec.boundObjectRef)
      : undefined;
    const audiences = spec.audiences.length > 0 ? spec.audiences : this.config.apiAudiences;
    // Whole seconds, as JWT NumericDates are: the expirationTimestamp returned is then exactly the token's exp.
    const now = Math.floor(this.now() / 1000);
    const claims = tokenClaims({
      issuer: this.config.issuers[0],
      namespace,
      serviceAccount: { name, uid: sa.metadata.uid! },
      audiences,
      expirationSeconds: spec.expirationSeconds,
      bound,
      now,
    });
    return {
      token: await signToken(this.config, claims),
      audiences,
      issuedAt: new Date(now * 1000),
      expiresAt: new Date(claims.exp * 1000),
    };
  }

  private async boundObject(
    namespace: string,
    saName: string,
    ref: NonNullable<TokenSpec['boundObjectRef']>,
  ): Promise<{ kind: 'Pod' | 'Secret'; ref: ObjectRef }> {
    const group = (ref.apiVersion ?? '').includes('/') ? ref.apiVersion!.split('/')[0] : '';
    const version = (ref.apiVersion ?? '').split('/').pop()!;
    const kind = ref.kind ?? '';
    if (group !== '' || (kind !== 'Pod' && kind !== 'Secret')) {
      // Go prints the GroupVersionKind as `group/version, Kind=kind`.
      throw newBadRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
    }
    const resource = kind === 'Pod' ? 'pods' : 'secrets';
    const objectName = ref.name ?? '';
    const obj = this.objects.serves(resource)
      ? await this.objects.object(resource, namespace, objectName)
      : undefined;
    if (!obj) throw newNotFound({ group: '', resource }, objectName);
    if (kind === 'Pod') {
      const podSa = (obj.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName ?? '';
      if (podSa !== saName) {
        throw newBadRequest(
          `cannot bind token for serviceaccount "${saName}" to pod running with serviceaccount "${podSa}"`,
        );
      }
    }
    const uid = obj.metadata.uid!;
    if (ref.uid && ref.uid !== uid) {
      throw newConflict(
        { group: '', resource: kind },
        objectName,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    return { kind, ref: { name: objectName, uid } };
  }

  /** The issuer discovery documents, rendered once; undefined when the issuer is not an https URL. */
  discovery(jwksUri: string): DiscoveryDocuments | undefined {
    if (this.documents?.jwksUri !== jwksUri) {
      this.documents = { jwksUri, documents: discoveryDocuments(this.config, jwksUri) };
    }
    return this.documents.documents;
  }
}
