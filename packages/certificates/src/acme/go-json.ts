/**
 * The bytes Go's encoding/json writes for cert-manager's ACME types, so that names hashed from them
 * (names.ts) come out as cert-manager's do. Go writes struct fields in declaration order, drops
 * `omitempty` fields only when they are zero (false, 0, "", nil pointer, empty slice or map), always
 * writes the others (a nil slice, map or pointer as `null`, a struct value in full), sorts map keys,
 * and escapes <, >, & and U+2028/U+2029. A JSON object read from the API carries none of this, so each
 * Go struct is described below by its fields, in pkg/apis/acme/v1 and pkg/apis/meta/v1 order.
 * See docs/adr/1010-acme-names-and-http01-by-hand.md.
 */

import { formatGoDuration, isObject, parseGoDuration } from '@certkit/apimachinery';

/** A Go type as encoding/json sees it. */
export type GoType =
  | 'string'
  | 'bool'
  | 'int'
  /** metav1.Duration: a Go duration string, re-formatted as time.Duration.String() writes it. */
  | 'duration'
  /** []byte: base64 text on the wire and in the hash. */
  | 'bytes'
  /** resource.Quantity: written as the text given (not canonicalized; see names.ts). */
  | 'quantity'
  /** apiextensions JSON or a core/v1 type passed through: written compactly in the order read. */
  | 'raw'
  | { ptr: GoType }
  | { slice: GoType }
  | { map: GoType }
  | { struct: GoField[] };

/** [json name, type, omitempty] */
export type GoField = readonly [name: string, type: GoType, omitempty: boolean];

const OMIT = true;
const KEEP = false;

const struct = (...fields: GoField[]): { struct: GoField[] } => ({ struct: fields });
const ptr = (type: GoType): { ptr: GoType } => ({ ptr: type });
const slice = (type: GoType): { slice: GoType } => ({ slice: type });
const map = (type: GoType): { map: GoType } => ({ map: type });

/** cmmeta.SecretKeySelector: LocalObjectReference inlined (name), then key. */
const secretKeySelector = struct(['name', 'string', KEEP], ['key', 'string', OMIT]);

/** cmmeta.IssuerReference. */
export const IssuerReference = struct(
  ['name', 'string', KEEP],
  ['kind', 'string', OMIT],
  ['group', 'string', OMIT],
);

const objectMetaTemplate = struct(['annotations', map('string'), OMIT], ['labels', map('string'), OMIT]);

const podTemplate = struct(
  ['metadata', objectMetaTemplate, KEEP],
  [
    'spec',
    struct(
      ['nodeSelector', map('string'), OMIT],
      ['affinity', ptr('raw'), OMIT],
      [
        'tolerations',
        slice(
          struct(
            ['key', 'string', OMIT],
            ['operator', 'string', OMIT],
            ['value', 'string', OMIT],
            ['effect', 'string', OMIT],
            ['tolerationSeconds', ptr('int'), OMIT],
          ),
        ),
        OMIT,
      ],
      ['priorityClassName', 'string', OMIT],
      ['serviceAccountName', 'string', OMIT],
      ['imagePullSecrets', slice(struct(['name', 'string', OMIT])), OMIT],
      [
        'securityContext',
        ptr(
          struct(
            [
              'seLinuxOptions',
              ptr(
                struct(
                  ['user', 'string', OMIT],
                  ['role', 'string', OMIT],
                  ['type', 'string', OMIT],
                  ['level', 'string', OMIT],
                ),
              ),
              OMIT,
            ],
            ['runAsUser', ptr('int'), OMIT],
            ['runAsGroup', ptr('int'), OMIT],
            ['runAsNonRoot', ptr('bool'), OMIT],
            ['supplementalGroups', slice('int'), OMIT],
            ['fsGroup', ptr('int'), OMIT],
            ['sysctls', slice(struct(['name', 'string', KEEP], ['value', 'string', KEEP])), OMIT],
            ['fsGroupChangePolicy', ptr('string'), OMIT],
            [
              'seccompProfile',
              ptr(struct(['type', 'string', KEEP], ['localhostProfile', ptr('string'), OMIT])),
              OMIT,
            ],
          ),
        ),
        OMIT,
      ],
      [
        'resources',
        ptr(struct(['limits', map('quantity'), OMIT], ['requests', map('quantity'), OMIT])),
        OMIT,
      ],
    ),
    KEEP,
  ],
);

const http01 = struct(
  [
    'ingress',
    ptr(
      struct(
        ['serviceType', 'string', OMIT],
        ['ingressClassName', ptr('string'), OMIT],
        ['class', ptr('string'), OMIT],
        ['name', 'string', OMIT],
        ['podTemplate', ptr(podTemplate), OMIT],
        ['ingressTemplate', ptr(struct(['metadata', objectMetaTemplate, KEEP])), OMIT],
      ),
    ),
    OMIT,
  ],
  [
    'gatewayHTTPRoute',
    ptr(
      struct(
        ['serviceType', 'string', OMIT],
        ['labels', map('string'), OMIT],
        [
          'parentRefs',
          slice(
            struct(
              ['group', ptr('string'), OMIT],
              ['kind', ptr('string'), OMIT],
              ['namespace', ptr('string'), OMIT],
              ['name', 'string', KEEP],
              ['sectionName', ptr('string'), OMIT],
              ['port', ptr('int'), OMIT],
            ),
          ),
          OMIT,
        ],
        ['podTemplate', ptr(podTemplate), OMIT],
      ),
    ),
    OMIT,
  ],
);

const dns01 = struct(
  ['cnameStrategy', 'string', OMIT],
  ['nameservers', slice('string'), OMIT],
  [
    'akamai',
    ptr(
      struct(
        ['serviceConsumerDomain', 'string', KEEP],
        ['clientTokenSecretRef', secretKeySelector, KEEP],
        ['clientSecretSecretRef', secretKeySelector, KEEP],
        ['accessTokenSecretRef', secretKeySelector, KEEP],
      ),
    ),
    OMIT,
  ],
  [
    'cloudDNS',
    ptr(
      struct(
        ['serviceAccountSecretRef', ptr(secretKeySelector), OMIT],
        ['project', 'string', KEEP],
        ['hostedZoneName', 'string', OMIT],
      ),
    ),
    OMIT,
  ],
  [
    'cloudflare',
    ptr(
      struct(
        ['email', 'string', OMIT],
        ['apiKeySecretRef', ptr(secretKeySelector), OMIT],
        ['apiTokenSecretRef', ptr(secretKeySelector), OMIT],
      ),
    ),
    OMIT,
  ],
  [
    'route53',
    ptr(
      struct(
        [
          'auth',
          ptr(
            struct([
              'kubernetes',
              ptr(
                struct([
                  'serviceAccountRef',
                  ptr(struct(['name', 'string', KEEP], ['audiences', slice('string'), OMIT])),
                  KEEP,
                ]),
              ),
              KEEP,
            ]),
          ),
          OMIT,
        ],
        ['accessKeyID', 'string', OMIT],
        ['accessKeyIDSecretRef', ptr(secretKeySelector), OMIT],
        ['secretAccessKeySecretRef', secretKeySelector, KEEP],
        ['role', 'string', OMIT],
        ['hostedZoneID', 'string', OMIT],
        ['region', 'string', OMIT],
      ),
    ),
    OMIT,
  ],
  [
    'azureDNS',
    ptr(
      struct(
        ['clientID', 'string', OMIT],
        ['clientSecretSecretRef', ptr(secretKeySelector), OMIT],
        ['subscriptionID', 'string', KEEP],
        ['tenantID', 'string', OMIT],
        ['resourceGroupName', 'string', KEEP],
        ['hostedZoneName', 'string', OMIT],
        ['environment', 'string', OMIT],
        [
          'managedIdentity',
          ptr(
            struct(
              ['clientID', 'string', OMIT],
              ['resourceID', 'string', OMIT],
              ['tenantID', 'string', OMIT],
            ),
          ),
          OMIT,
        ],
        ['zoneType', 'string', OMIT],
      ),
    ),
    OMIT,
  ],
  ['digitalocean', ptr(struct(['tokenSecretRef', secretKeySelector, KEEP])), OMIT],
  ['acmeDNS', ptr(struct(['host', 'string', KEEP], ['accountSecretRef', secretKeySelector, KEEP])), OMIT],
  [
    'rfc2136',
    ptr(
      struct(
        ['nameserver', 'string', KEEP],
        // omitempty never omits a struct value: Go always writes it.
        ['tsigSecretSecretRef', secretKeySelector, OMIT],
        ['tsigKeyName', 'string', OMIT],
        ['tsigAlgorithm', 'string', OMIT],
        ['protocol', 'string', OMIT],
      ),
    ),
    OMIT,
  ],
  [
    'webhook',
    ptr(struct(['groupName', 'string', KEEP], ['solverName', 'string', KEEP], ['config', ptr('raw'), OMIT])),
    OMIT,
  ],
);

/** ACMEChallengeSolver. */
export const ACMEChallengeSolver = struct(
  [
    'selector',
    ptr(
      struct(
        ['matchLabels', map('string'), OMIT],
        ['dnsNames', slice('string'), OMIT],
        ['dnsZones', slice('string'), OMIT],
      ),
    ),
    OMIT,
  ],
  ['http01', ptr(http01), OMIT],
  ['dns01', ptr(dns01), OMIT],
  ['waitInsteadOfSelfCheck', ptr('duration'), OMIT],
);

/** OrderSpec. */
export const OrderSpec = struct(
  ['request', 'bytes', KEEP],
  ['issuerRef', IssuerReference, KEEP],
  ['commonName', 'string', OMIT],
  ['dnsNames', slice('string'), OMIT],
  ['ipAddresses', slice('string'), OMIT],
  ['duration', ptr('duration'), OMIT],
  ['profile', 'string', OMIT],
  ['replaces', 'string', OMIT],
);

/** ChallengeSpec: every field written, the solver in full. */
export const ChallengeSpec = struct(
  ['url', 'string', KEEP],
  ['authorizationURL', 'string', KEEP],
  ['dnsName', 'string', KEEP],
  ['wildcard', 'bool', KEEP],
  ['type', 'string', KEEP],
  ['token', 'string', KEEP],
  ['key', 'string', KEEP],
  ['solver', ACMEChallengeSolver, KEEP],
  ['issuerRef', IssuerReference, KEEP],
);

/**
 * metav1.Duration as Go writes it back. A value Go could not have decoded never reaches upstream's hash;
 * here it is hashed as written rather than failing the caller.
 */
function goDuration(text: string): string {
  try {
    return formatGoDuration(parseGoDuration(text));
  } catch {
    return text;
  }
}

/** A JSON string as Go writes it: HTML-safe, and the two line separators JavaScript allows escaped. */
export function goString(value: string): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function goRaw(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goString(value);
  if (Array.isArray(value)) return `[${value.map(goRaw).join(',')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${goString(k)}:${goRaw(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Whether a decoded value is Go's zero value for the type (what omitempty drops). Structs never are. */
function isEmpty(value: unknown, type: GoType): boolean {
  if (value === undefined || value === null) return typeof type === 'string' || !('struct' in type);
  if (typeof type === 'string') {
    if (type === 'bool') return value === false;
    if (type === 'int') return value === 0;
    if (type === 'raw') return false;
    return value === '';
  }
  if ('slice' in type) return Array.isArray(value) && value.length === 0;
  if ('map' in type) return isObject(value) && Object.keys(value).length === 0;
  return false;
}

/** Go's encoding of `value`, read from JSON into a field of `type`. */
export function encodeGo(value: unknown, type: GoType): string {
  if (typeof type === 'string') {
    switch (type) {
      case 'string':
      case 'bytes':
      case 'quantity':
        if (type === 'bytes' && (value === undefined || value === null)) return 'null';
        return goString(value === undefined || value === null ? '' : String(value));
      case 'bool':
        return value === true ? 'true' : 'false';
      case 'int':
        return typeof value === 'number' ? String(Math.trunc(value)) : '0';
      case 'duration':
        return goString(goDuration(String(value ?? '0s')));
      case 'raw':
        return goRaw(value);
    }
  }
  if ('ptr' in type) return value === undefined || value === null ? 'null' : encodeGo(value, type.ptr);
  if ('slice' in type) {
    if (!Array.isArray(value)) return 'null';
    return `[${value.map((item) => encodeGo(item, type.slice)).join(',')}]`;
  }
  if ('map' in type) {
    if (!isObject(value)) return 'null';
    // Go sorts map keys by their bytes; for the keys Kubernetes allows that is JavaScript's order.
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${goString(k)}:${encodeGo(value[k], type.map)}`).join(',')}}`;
  }
  const object = isObject(value) ? value : {};
  const parts: string[] = [];
  for (const [name, fieldType, omitempty] of type.struct) {
    const field = object[name];
    if (omitempty && isEmpty(field, fieldType)) continue;
    parts.push(`${goString(name)}:${encodeGo(field, fieldType)}`);
  }
  return `{${parts.join(',')}}`;
}
