import type { AcmeIdentifier, AcmeProblemDocument } from './problem.ts';

/** The ACME resources of RFC 8555 §7.1 as the client returns them; `url` is where each one lives. */

export interface AcmeDirectory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
  revokeCert?: string;
  keyChange?: string;
  newAuthz?: string;
  /** RFC 9773 (ARI); absent on servers without it, such as Pebble 2.4. */
  renewalInfo?: string;
  meta?: {
    termsOfService?: string;
    website?: string;
    caaIdentities?: string[];
    externalAccountRequired?: boolean;
    /** Profile name → description (draft-aaron-acme-profiles). */
    profiles?: Record<string, string>;
  };
}

export type AccountStatus = 'valid' | 'deactivated' | 'revoked';

export interface AcmeAccount {
  url: string;
  status: AccountStatus;
  contact?: string[];
  termsOfServiceAgreed?: boolean;
  orders?: string;
}

export type OrderStatus = 'pending' | 'ready' | 'processing' | 'valid' | 'invalid';

export interface AcmeOrder {
  url: string;
  status: OrderStatus;
  expires?: string;
  identifiers: AcmeIdentifier[];
  notBefore?: string;
  notAfter?: string;
  error?: AcmeProblemDocument;
  authorizations: string[];
  finalize: string;
  certificate?: string;
  profile?: string;
  replaces?: string;
}

export type AuthorizationStatus = 'pending' | 'valid' | 'invalid' | 'deactivated' | 'expired' | 'revoked';

export interface AcmeAuthorization {
  url: string;
  identifier: AcmeIdentifier;
  status: AuthorizationStatus;
  expires?: string;
  challenges: AcmeChallenge[];
  wildcard?: boolean;
}

export type ChallengeStatus = 'pending' | 'processing' | 'valid' | 'invalid';

export interface AcmeChallenge {
  url: string;
  type: string;
  status: ChallengeStatus;
  token: string;
  validated?: string;
  error?: AcmeProblemDocument;
}

/** A certificate chain as downloaded: PEM, leaf first, and the URLs of the server's alternate chains. */
export interface AcmeCertificateChain {
  pem: string;
  alternates: string[];
}
