/** The cert-manager.io/v1 API: types and constants, CRDs, runtime defaults, webhook validation. */

export * from './types.ts';
export { certManagerCrds } from './crds.ts';
export * from './defaults.ts';
export * from './validation.ts';
export { attributeOid, parseDN, type Attribute, type RelativeDN } from './dn.ts';
