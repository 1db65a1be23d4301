/** The Order and Challenge schemas: every field of pkg/apis/acme/v1/types_order.go and types_challenge.go. */

import { ACME_CHALLENGE_TYPES, ACME_STATES } from '../acme-constants.ts';
import { acmeChallengeSolver } from './acme-issuer.ts';
import {
  boolean,
  bytes,
  dateTime,
  issuerRef,
  list,
  object,
  oneOf,
  resource,
  type Schema,
  string,
  stringList,
} from './builders.ts';

const state = (description: string) => oneOf(description, ACME_STATES);

const orderSpec = object(
  'What to order from the ACME server; built by the controller from a CertificateRequest.',
  {
    request: bytes('The CertificateRequest’s CSR, sent to the finalize URL. Immutable once set.'),
    issuerRef: issuerRef('The ACME issuer the order is made with.'),
    commonName: string('Common name of the CSR; must also be one of its DNS names or IP addresses.'),
    dnsNames: stringList('DNS names to authorize and put in the certificate.'),
    ipAddresses: stringList('IP addresses to authorize and put in the certificate.'),
    duration: string('Requested lifetime (a Go duration), sent as notAfter when the issuer enables it.'),
    profile: string('Certificate profile requested from the ACME server.'),
    replaces: string('ARI CertID of the certificate this order replaces (RFC 9773).'),
  },
  ['issuerRef', 'request'],
);

const orderStatus = object('Progress of the order, as the ACME server reported it.', {
  url: string('URL of the order on the ACME server. Immutable once set.'),
  finalizeURL: string('URL the CSR is sent to once every authorization is valid. Immutable once set.'),
  authorizations: list(
    'The authorizations the server requires for the order.',
    object(
      'One authorization: the identifier and the challenges the server offers for it.',
      {
        url: string('URL of the authorization.'),
        identifier: string('The name being authorized, without a wildcard prefix.'),
        wildcard: boolean('Whether this authorizes a wildcard name (*. plus the identifier).'),
        initialState: state('State of the authorization when first fetched; valid ones need no challenge.'),
        challenges: list(
          'Challenges the server offers; one of them must be completed.',
          object(
            'A challenge as the ACME server lists it.',
            {
              url: string('URL of the challenge, posted to accept it.'),
              token: string('Token the key authorization is made from.'),
              type: string('The ACME challenge type, e.g. http-01 or dns-01.'),
            },
            ['token', 'type', 'url'],
          ),
        ),
      },
      ['url'],
    ),
  ),
  certificate: bytes('The issued PEM certificate chain, base64-encoded. Immutable once set.'),
  state: state('State of the order: pending, ready, processing, valid, or a failure state.'),
  reason: string('Why the order is in its state, e.g. the server’s error.'),
  failureTime: dateTime('When the order failed.'),
});

export const orderSchema: Schema = resource(
  'An Order is one ACME certificate order, made for a CertificateRequest on an ACME issuer.',
  orderSpec,
  orderStatus,
  ['metadata', 'spec'],
);

const challengeSpec = object(
  'The challenge to solve. Immutable after creation.',
  {
    url: string('URL of the challenge on the ACME server.'),
    authorizationURL: string('URL of the authorization the challenge belongs to.'),
    dnsName: string('The name being authorized, without a wildcard prefix.'),
    wildcard: boolean('Whether the authorization is for the wildcard of dnsName.'),
    type: oneOf('The challenge type: HTTP-01 or DNS-01.', ACME_CHALLENGE_TYPES),
    token: string('The challenge token.'),
    key: string('HTTP-01: the key authorization to serve. DNS-01: the TXT record value.'),
    solver: acmeChallengeSolver,
    issuerRef: issuerRef('The ACME issuer whose account the challenge is solved for.'),
  },
  ['authorizationURL', 'dnsName', 'issuerRef', 'key', 'solver', 'token', 'type', 'url'],
);

const challengeStatus = object('Progress of the challenge.', {
  processing: boolean('Whether the controller is working on the challenge (set by its scheduler).'),
  presented: boolean('Whether the solver has presented the challenge (served the key or set the record).'),
  presentedAt: dateTime('When the challenge was first presented.'),
  reason: string('Why the challenge is in its state, e.g. a self-check or server error.'),
  state: state('State of the challenge as the ACME server reported it.'),
});

export const challengeSchema: Schema = resource(
  'A Challenge is one ACME challenge of an Order, solved by the controller with the issuer’s chosen solver.',
  challengeSpec,
  challengeStatus,
  ['metadata', 'spec'],
);
