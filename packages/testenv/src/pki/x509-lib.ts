// An independent X.509 parser that @certkit/certificates' pki tests read its certificates and CSRs back with.
// Its signing paths build their DER themselves (pki/x509-encode.ts), so its product code must not import
// this module. The parser comes set up on Node's WebCrypto from the API server's certificate code
// (security/x509.ts), which shares nothing with that DER writer.
export { x509 } from '@certkit/apiserver/security/x509';
