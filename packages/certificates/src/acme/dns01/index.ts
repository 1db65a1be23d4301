/** DNS-01 for the ACME issuer: the solver, its providers (RFC2136 so far) and the propagation check. */

export {
  DNS01_PROPAGATION_WAIT_MS,
  DNS01Solver,
  defaultDNS01Providers,
  parseRecursiveNameservers,
  type DNS01Challenge,
  type DNS01SolverOptions,
} from './solver.ts';
export {
  DNS01_PROVIDER_KEYS,
  DNS01ConfigError,
  DNS01ProviderRegistry,
  readSecretKey,
  secretReaderFrom,
  type DNS01ChangeRequest,
  type DNS01Provider,
  type SecretData,
  type SecretReader,
} from './provider.ts';
export { DNS01Resolver, type DNS01ResolverOptions } from './propagation.ts';
export { NameserverError, formatNameserver, parseCheckNameserver, type Nameserver } from './nameserver.ts';
export {
  DnsUpdateError,
  RFC2136_TXT_TTL,
  rfc2136Provider,
  sendUpdate,
  type RFC2136Config,
} from './rfc2136.ts';
export { TSIG_ALGORITHMS, TsigError } from './tsig.ts';
