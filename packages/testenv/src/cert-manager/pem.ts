/**
 * PEM fixtures made once with OpenSSL 3 (`openssl req -new -newkey {ec,rsa:2048,ed25519}` and
 * `openssl req -x509`); their keys were thrown away. They do not depend on
 * @certkit/certificates/pki, so validation tests do not trust the code they check.
 */

export const ECDSA_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIIBCjCBsgIBADAWMRQwEgYDVQQDDAtleGFtcGxlLmNvbTBZMBMGByqGSM49AgEG
CCqGSM49AwEHA0IABHL3fjc5akS81dy6MQpWQkhNdRkn3u+arRrPkycLMQrsuLqO
KY5TBpN3eEOsz2sS9GqFdP5YK1wqAiPhqz2RAOygOjA4BgkqhkiG9w0BCQ4xKzAp
MCcGA1UdEQQgMB6CC2V4YW1wbGUuY29tgg93d3cuZXhhbXBsZS5jb20wCgYIKoZI
zj0EAwIDRwAwRAIga5BV0zzl9bzL565yQKdeaiPR6frI9kxFEZtuSfWyS7cCIEq+
dBySTS/w6TQxqCzq2ILf/8ztmPuGSnc/s1gOKIXz
-----END CERTIFICATE REQUEST-----
`;

export const RSA_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIICXzCCAUcCAQAwGjEYMBYGA1UEAwwPcnNhLmV4YW1wbGUuY29tMIIBIjANBgkq
hkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA314aoZ7j1n0Z2AfTqb2vfXc5ezAKg0bn
8Qzc8r1u+BsGU6A7Hh7rD5MAuOEe4f/BpoFzkIjsulE/+PY3QOquhwgZN4O0bIb5
0b3Ys1z6ayrt3dVlCIJst8gFJuHE4qgsAMDUeM+rsQWUhyt2fLpHl5r9wzpulIT8
CyKuqFotlpxdP4WidvUmI0pU5P6EpG/wt13wuXy8qohknFcl8Mn7Bie+6aU0VVzB
Sw2F1yIKTdGyADjfUiSwKjIyGiuuEe3VgHyDZy9ZiNNKu1EBSxIFk5qe9FVn/uej
TaI3klU1U554WzEnZr/OurSLvm8+5mGzrQQCk3hn4lX3diPDEAkqGwIDAQABoAAw
DQYJKoZIhvcNAQELBQADggEBAC/PAx+j0v+SvGiA8HHCsqOwRD+72EkXaWdSuy/G
sTR80U2suX2caiN5lJitcWbPkBoPXvucwoLdiEodBYqmOZqZK+xu+CbZ5GxLTNKf
7ThX9W4xVXSO2PzX8BUg7RSm9bEwz48Oc45A+25XnvU52kLArIyCHu7oAUDKkiv9
i0OYcEZ0DFWt6xMbbjraGSASBFzrQyPhFgxciWhjABp5gjRm6PXFt91GXZ6ADyaP
wg4XBKxztbDJkgnAL7HgAUDxXq7FpUsiy666SdceBdAtX0dp6Dtg9cWBUPfBHXbL
4mAsvm0KBzButTrbT2NQt9s4E8f0jx3uVajpJpyKl2QcJ3o=
-----END CERTIFICATE REQUEST-----
`;

export const ED25519_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIGYMEwCAQAwGTEXMBUGA1UEAwwOZWQuZXhhbXBsZS5jb20wKjAFBgMrZXADIQCZ
tMR8UrTw98JN6MB6978wz2JHNoI1eclircT5UJuyjqAAMAUGAytlcANBAC995pIs
XeaqRvEb8/y4C4JLAs9la0S98KmOI0rGDOV1w+BeJogSDRRPyp1UP9+OPJv75ODL
LEUkvF919P5H6wc=
-----END CERTIFICATE REQUEST-----
`;

/** A self-signed CA certificate, for caBundle fields. */
export const CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBgDCCASWgAwIBAgIUDmTPPTXE5nskxKd1GKjxpjUkW5QwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKRXhhbXBsZSBDQTAeFw0yNjExMjEyMzA3NDlaFw0zNjExMTgy
MzA3NDlaMBUxEzARBgNVBAMMCkV4YW1wbGUgQ0EwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATIkFdmVyoMsmZIjIsAFLC3jhDaWFcWrFR9+gcK4fzIXZboN27XrppT
dXZuzc9Juita3E7IUXTJMcYWRs0Zd4ifo1MwUTAdBgNVHQ4EFgQUy6X0CiDYHRkP
LRfs0gt9XzR7MZgwHwYDVR0jBBgwFoAUy6X0CiDYHRkPLRfs0gt9XzR7MZgwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAmxmIuZZK6o/YxM8iYWWQ
mMOCmbjcXA6cNLSbyid4JEgCIQDBizBHuSDrsIC/QAIfV1Ohp5wzltg5YzObMgrN
yEfRig==
-----END CERTIFICATE-----
`;

/** Base64 as JSON carries Go []byte fields such as spec.request and caBundle. */
export function base64(text: string): string {
  return Buffer.from(text).toString('base64');
}
