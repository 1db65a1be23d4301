export { loadAccountKey, type AccountKey, type AccountKeyAlgorithm } from './account-key.ts';
export { chainMatchesPreferred, topIssuerCommonName } from './chains.ts';
export {
  AcmeClient,
  AcmePollTimeoutError,
  POLL_MIN_MS,
  AcmeUnsupportedProfileError,
  type AcmeClientOptions,
  type ExternalAccountBindingInput,
  type NewOrderInput,
  type RetryPolicy,
} from './client.ts';
export { decodeEabHmacKey } from './jws.ts';
export { dns01RecordName, dns01TxtValue, http01Path, keyAuthorization } from './key-authorization.ts';
export { registerAcmeClientMetrics, type AcmeAction, type AcmeClientMetrics } from './metrics.ts';
export {
  AcmeErrorType,
  AcmeProblemError,
  AcmeProtocolError,
  AcmeTransportError,
  type AcmeIdentifier,
  type AcmeProblemDocument,
  type AcmeSubproblem,
} from './problem.ts';
export type * from './resources.ts';
