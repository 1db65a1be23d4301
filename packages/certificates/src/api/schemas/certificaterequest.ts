/** The CertificateRequest schema: every field of types_certificaterequest.go. */

import {
  boolean,
  bytes,
  conditions,
  dateTime,
  issuerRef,
  object,
  resource,
  type Schema,
  string,
  stringList,
  usages,
} from './builders.ts';

const spec = object(
  'The request to sign. Immutable once created.',
  {
    duration: string('Requested lifetime of the certificate, as a Go duration.'),
    issuerRef: issuerRef('The issuer that should sign the request.'),
    request: bytes('The PEM-encoded PKCS#10 certificate signing request, base64-encoded.'),
    isCA: boolean('Request a CA certificate (basicConstraints CA); adds the `cert sign` usage.'),
    usages: usages('Requested key usages and extended key usages.'),
    username: string('Name of the user who created the request; set by the API server.'),
    uid: string('UID of the user who created the request; set by the API server.'),
    groups: stringList('Groups of the user who created the request; set by the API server.'),
    extra: {
      description: 'Extra attributes of the user who created the request; set by the API server.',
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    },
  },
  ['issuerRef', 'request'],
);

const status = object('Observed state of the CertificateRequest, set by approvers and signers.', {
  conditions: conditions(
    'Conditions of the request; known types are Ready, InvalidRequest, Approved and Denied.',
    false,
  ),
  certificate: bytes('The signed certificate chain, PEM, base64-encoded.'),
  ca: bytes('The CA certificate of the issuer, PEM, base64-encoded (deprecated upstream, still set).'),
  failureTime: dateTime('When the request failed; used to back off retries.'),
});

export const certificateRequestSchema: Schema = resource(
  'A CertificateRequest asks an issuer to sign a CSR. Certificates create them; the issuer fills status.certificate.',
  spec,
  status,
);
